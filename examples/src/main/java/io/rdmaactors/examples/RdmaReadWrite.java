package io.rdmaactors.examples;

import io.rdmaactors.actors.LocalRegion;
import io.rdmaactors.actors.Rdma;
import io.rdmaactors.actors.RdmaProtocol;
import io.rdmaactors.actors.RdmaProtocol.ConnectionCommand;
import io.rdmaactors.actors.RdmaProtocol.ConnectionEvent;
import io.rdmaactors.actors.RemoteRegion;
import io.rdmaactors.verbs.Access;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.concurrent.Callable;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The RC example of one-sided RDMA: the server exports a buffer for remote read and write and
 * hands the client its region; the client RDMA-writes a block, reads it back and compares, then
 * writes a second block with an immediate, which the server sees as a Received carrying the
 * immediate and answers by checking its own memory. The client's private data says the block
 * size. -s serves one client and exits; neither -s nor -c runs both here. -Z has the client write
 * from memory it registered and read back into it.
 */
@Command(name = "rdma",
        description = "RDMA write, read back and write-with-immediate into an exported region, verified on both sides.")
public final class RdmaReadWrite implements Callable<Integer> {

    private static final String NAME = "rdma";
    private static final byte VERIFIED = 1;

    @Mixin
    RdmaFlags flags;

    @Option(names = {"-S", "--size"}, defaultValue = "1024", description = "bytes of each block (at least 4)")
    int size;

    @Option(names = {"-Z", "--zero-copy"}, description = "the client writes from memory it registered and reads"
            + " back into it, copying no block")
    boolean zeroCopy;

    @Override
    public Integer call() {
        flags.check("--size", size, Payload.MIN_SIZE, Program.MAX_SIZE);
        Duration limit = Duration.ofSeconds(30);
        if (flags.role() == RdmaFlags.Role.CLIENT) {
            return Program.run(NAME, flags, Program.bufferFor(size), limit, r -> client(flags.serverAddress(), r));
        }
        return Program.run(NAME, flags, Program.bufferFor(size), limit, r -> Program.listener(NAME, flags, r,
                server -> client(server, r), reports -> server(reports, r)));
    }

    /** Exports two blocks of the size the client's private data asks for; the immediate says how many bytes it wrote. */
    private static Behavior<ConnectionEvent> server(boolean reports, Program.Result result) {
        return Behaviors.setup(ctx -> Behaviors.receive(ConnectionEvent.class)
                .onMessage(RdmaProtocol.Connected.class, c -> {
                    int blockSize = Payload.first(c.privateData());
                    if (blockSize < Payload.MIN_SIZE || blockSize > Program.MAX_SIZE) {
                        return result.failed("server: the client asked for blocks of " + blockSize + " bytes");
                    }
                    if (reports) {
                        System.out.println(NAME + " server: client " + c.remote() + " connected");
                    }
                    ByteBuffer memory = ByteBuffer.allocateDirect(2 * blockSize);
                    Regions.exportAndSend(ctx, c.connection(), memory, EnumSet.of(Access.REMOTE_READ, Access.REMOTE_WRITE));
                    return exported(c, memory, blockSize, reports, result);
                })
                .onAnyMessage(e -> result.unexpected("server", e))
                .build());
    }

    private static Behavior<ConnectionEvent> exported(RdmaProtocol.Connected connected, ByteBuffer memory,
                                                      int blockSize, boolean reports, Program.Result result) {
        boolean[] verified = {false};
        return Behaviors.receive(ConnectionEvent.class)
                .onMessage(RdmaProtocol.Received.class, r -> r.immediate() != null, r -> {
                    byte[] written = new byte[r.immediate()];
                    memory.get(0, written);
                    if (r.immediate() != 2 * blockSize
                            || Payload.check(Arrays.copyOfRange(written, 0, blockSize), blockSize) != 0
                            || Payload.check(Arrays.copyOfRange(written, blockSize, 2 * blockSize), blockSize) != 1) {
                        return result.failed("server: its memory does not hold what the client wrote");
                    }
                    verified[0] = true;
                    connected.connection().tell(RdmaProtocol.Send.of(new byte[] {VERIFIED}, null));
                    return Behaviors.same();
                })
                .onMessage(RdmaProtocol.Disconnected.class, d -> {
                    if (!verified[0]) {
                        return result.failed("server: " + Program.describe(d) + " before the client's write-with-immediate");
                    }
                    if (reports) {
                        result.succeed(String.format("%s server: client %s RDMA-wrote 2 blocks of %d bytes into its"
                                + " exported region, announced by immediate %d; its memory verified", NAME,
                                connected.remote(), blockSize, 2 * blockSize));
                    }
                    return Behaviors.stopped();
                })
                .onAnyMessage(e -> result.unexpected("server", e))
                .build();
    }

    private Behavior<ConnectionEvent> client(InetSocketAddress server, Program.Result result) {
        return Behaviors.setup(ctx -> {
            Rdma.get(ctx.getSystem()).manager().tell(RdmaProtocol.Connect.to(server, ctx.getSelf())
                    .withPrivateData(Payload.ints(size, 0)).withTimeout(Program.CONNECT_TIMEOUT));
            return Behaviors.receive(ConnectionEvent.class)
                    .onMessage(RdmaProtocol.Connected.class, c -> awaitingRegion(c.connection(), result))
                    .onAnyMessage(e -> result.unexpected("client", e))
                    .build();
        });
    }

    private Behavior<ConnectionEvent> awaitingRegion(ActorRef<ConnectionCommand> connection, Program.Result result) {
        return Behaviors.setup(ctx -> Behaviors.receive(ConnectionEvent.class)
                .onMessage(RdmaProtocol.Received.class, r -> {
                    RemoteRegion region = RemoteRegion.fromBytes(r.data());
                    if (!zeroCopy) {
                        connection.tell(RdmaProtocol.Write.of(region, 0, Payload.of(0, size), "write"));
                        connection.tell(new RdmaProtocol.Read(region, 0, size, "read"));
                        return transferring(connection, region, null, result);
                    }
                    // a block to write from and one to read into, registered for this connection's use only
                    connection.tell(new RdmaProtocol.RegisterMemory(ByteBuffer.allocateDirect(2 * size),
                            ctx.getSelf().narrow()));
                    return Behaviors.receive(ConnectionEvent.class)
                            .onMessage(RdmaProtocol.MemoryRegistered.class, m -> {
                                LocalRegion local = m.region();
                                Payload.write(local.buffer(), 0, size);
                                connection.tell(RdmaProtocol.Write.of(region, 0, local.slice(0, size), "write"));
                                connection.tell(RdmaProtocol.Read.into(region, 0, local.slice(size, size), "read"));
                                return transferring(connection, region, local, result);
                            })
                            .onAnyMessage(e -> result.unexpected("client", e))
                            .build();
                })
                .onAnyMessage(e -> result.unexpected("client", e))
                .build());
    }

    /**
     * Write and read go out back to back: an RC QP executes them in order, so the read sees the
     * write. {@code local} is the client's registered memory, or null when the blocks are copied.
     */
    private Behavior<ConnectionEvent> transferring(ActorRef<ConnectionCommand> connection, RemoteRegion region,
                                                   LocalRegion local, Program.Result result) {
        return Behaviors.receive(ConnectionEvent.class)
                .onMessage(RdmaProtocol.Acked.class, a -> a.token().equals("write"), a -> Behaviors.same())
                .onMessage(RdmaProtocol.ReadCompleted.class, r -> {
                    ByteBuffer read = local == null ? r.data().asByteBuffer() : local.buffer().slice(size, size);
                    if (Payload.check(read, size) != 0) {
                        return result.failed("client: the block read back differs from the block written");
                    }
                    RdmaProtocol.Write second;
                    if (local == null) {
                        second = RdmaProtocol.Write.of(region, size, Payload.of(1, size), "imm");
                    } else {
                        // the first Write completed before the Read: its block may carry the second
                        Payload.write(local.buffer(), 1, size);
                        second = RdmaProtocol.Write.of(region, size, local.slice(0, size), "imm");
                    }
                    connection.tell(second.withImmediate(2 * size));
                    return Behaviors.same();
                })
                .onMessage(RdmaProtocol.Acked.class, a -> a.token().equals("imm"), a -> Behaviors.same())
                .onMessage(RdmaProtocol.Received.class, r -> {
                    if (r.data().size() != 1 || r.data().apply(0) != VERIFIED) {
                        return result.failed("client: the server did not confirm its memory");
                    }
                    connection.tell(new RdmaProtocol.Close());
                    return Behaviors.same();
                })
                .onMessage(RdmaProtocol.Disconnected.class, d -> {
                    result.succeed(String.format(NAME + ": region of %d bytes (rkey 0x%x) exported with remote read and"
                            + " write; %d bytes RDMA-written, read back identical; write-with-immediate %d seen by"
                            + " the server, its memory verified%s", region.length(), region.rkey(), size, 2 * size,
                            local == null ? "" : "; zero copy"));
                    return Behaviors.stopped();
                })
                .onAnyMessage(e -> result.unexpected("client", e))
                .build();
    }
}
