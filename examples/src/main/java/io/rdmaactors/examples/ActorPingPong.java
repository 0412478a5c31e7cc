package io.rdmaactors.examples;

import io.rdmaactors.actors.LocalRegion;
import io.rdmaactors.actors.Rdma;
import io.rdmaactors.actors.RdmaProtocol;
import io.rdmaactors.actors.RdmaProtocol.ConnectionCommand;
import io.rdmaactors.actors.RdmaProtocol.ConnectionEvent;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.Callable;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * Ping-pong on the actor API: the listener hands each connection to an echoing agent, the client's
 * private data tells the agent how many messages of which size to expect, and the client checks
 * every byte that comes back. -s serves one client and exits, as ib_send_lat's server does. -Z
 * shows the zero-copy API on the client's side: requests sent from registered memory, answers
 * read in their receive buffers.
 */
@Command(name = "actor-ping-pong",
        description = "Send/receive ping-pong between a client and an echo agent, every byte verified.")
public final class ActorPingPong implements Callable<Integer> {

    private static final String NAME = "actor-ping-pong";

    @Mixin
    RdmaFlags flags;

    @Option(names = {"-C", "--count"}, defaultValue = "10000", description = "round trips measured (default ${DEFAULT-VALUE})")
    int count;

    @Option(names = {"-W", "--warm-up"}, defaultValue = "50000",
            description = "round trips before the measured ones, left out of the report (default ${DEFAULT-VALUE})")
    int warmUp;

    @Option(names = {"-S", "--size"}, defaultValue = "64", description = "message bytes, at least 4 (default ${DEFAULT-VALUE})")
    int size;

    @Option(names = {"-Z", "--zero-copy"}, description = "the client sends from memory it registered and reads each"
            + " answer where it landed (receive in place), copying no message; the agent copies as before")
    boolean zeroCopy;

    @Option(names = {"-V", "--verify"}, negatable = true, defaultValue = "true", fallbackValue = "true",
            description = "check every byte that comes back (default; --no-verify checks nothing)")
    boolean verify;

    @Override
    public Integer call() {
        flags.check("--count", count, 1, Integer.MAX_VALUE);
        flags.check("--warm-up", warmUp, 0, Integer.MAX_VALUE - count);
        flags.check("--size", size, Payload.MIN_SIZE, Program.MAX_SIZE);
        Duration limit = Duration.ofSeconds(60 + (count + warmUp) / 1000);
        if (flags.role() == RdmaFlags.Role.CLIENT) {
            return Program.run(NAME, flags, Program.bufferFor(size), limit, r -> client(flags.serverAddress(), r));
        }
        // the server's buffers fit any size a client announces
        return Program.run(NAME, flags, Program.bufferFor(flags.role() == RdmaFlags.Role.SERVER ? Program.MAX_SIZE : size),
                limit, r -> Program.listener(NAME, flags, r, server -> client(server, r), alone -> agent(alone, r)));
    }

    /** Echoes every message; the request's private data says how many and how large. */
    private static Behavior<ConnectionEvent> agent(boolean reports, Program.Result result) {
        return Behaviors.receive(ConnectionEvent.class)
                .onMessage(RdmaProtocol.Connected.class, c -> {
                    if (reports) {
                        System.out.println(NAME + " server: client " + c.remote() + " connected");
                    }
                    return echoing(c, Payload.first(c.privateData()), Payload.second(c.privateData()), reports, result);
                })
                .onAnyMessage(e -> result.unexpected("server", e))
                .build();
    }

    /** One behavior for the whole run, not one per message: each would be garbage the GC pauses for. */
    private static Behavior<ConnectionEvent> echoing(RdmaProtocol.Connected connected, int rounds, int bytes,
                                                     boolean reports, Program.Result result) {
        int[] echoed = {0};
        return Behaviors.receive(ConnectionEvent.class)
                .onMessage(RdmaProtocol.Received.class, r -> {
                    if (r.data().size() != bytes) {
                        return result.failed("server: " + r.data().size() + " bytes received, " + bytes + " announced");
                    }
                    // the echo hands the received bytes back once it copied them, for a later message
                    connected.connection().tell(RdmaProtocol.Send.of(r.data(), null).releasing(r));
                    echoed[0]++;
                    return Behaviors.same();
                })
                .onMessage(RdmaProtocol.Disconnected.class, d -> {
                    if (echoed[0] != rounds) {
                        return result.failed("server: " + Program.describe(d) + " after " + echoed[0] + " of " + rounds
                                + " round trips");
                    }
                    if (reports) {
                        result.succeed(String.format("%s server: echoed %d messages of %d bytes to %s", NAME, echoed[0],
                                bytes, connected.remote()));
                    }
                    return Behaviors.stopped();
                })
                .onAnyMessage(e -> result.unexpected("server", e))
                .build();
    }

    private Behavior<ConnectionEvent> client(InetSocketAddress server, Program.Result result) {
        return Behaviors.setup(ctx -> {
            // zero copy: every answer stays in its receive buffer until the next request releases it
            RdmaProtocol.ConnectionOptions options = zeroCopy
                    ? RdmaProtocol.ConnectionOptions.none().withReceiveInPlace(1) : RdmaProtocol.ConnectionOptions.none();
            Rdma.get(ctx.getSystem()).manager().tell(RdmaProtocol.Connect.to(server, ctx.getSelf())
                    .withPrivateData(Payload.ints(warmUp + count, size)).withTimeout(Program.CONNECT_TIMEOUT)
                    .withOptions(options));
            return Behaviors.receive(ConnectionEvent.class)
                    .onMessage(RdmaProtocol.Connected.class, c -> {
                        if (!zeroCopy) {
                            return pinging(c.connection(), null, result);
                        }
                        c.connection().tell(new RdmaProtocol.RegisterMemory(ByteBuffer.allocateDirect(size),
                                ctx.getSelf().narrow()));
                        return Behaviors.receive(ConnectionEvent.class)
                                .onMessage(RdmaProtocol.MemoryRegistered.class,
                                        m -> pinging(c.connection(), m.region(), result))
                                .onAnyMessage(e -> result.unexpected("client", e))
                                .build();
                    })
                    .onAnyMessage(e -> result.unexpected("client", e))
                    .build();
        });
    }

    /** Request {@code round}: from {@code memory}, written in place, or else a ByteString of its own. */
    private RdmaProtocol.Send request(int round, LocalRegion memory) {
        if (memory == null) {
            return RdmaProtocol.Send.of(Payload.of(round, size), null);
        }
        // the previous request is through: its answer came, so the memory may carry the next
        Payload.write(memory.buffer(), round, size);
        return RdmaProtocol.Send.of(memory.slice(0, size));
    }

    /** Where the client's run is: one behavior holds it for the whole run. */
    private final class Rounds {
        final Report report = new Report();
        final Report.Progress progress = Report.Progress.of(NAME + " round trips", warmUp + count);
        int round;
        /** When the measured round trips started (the warm-up's end). */
        long start;
        long sent;

        Rounds(long now) {
            start = now;
            sent = now;
        }
    }

    /** Sends the first request and measures every round trip; {@code memory} is null unless zero copy. */
    private Behavior<ConnectionEvent> pinging(ActorRef<ConnectionCommand> connection, LocalRegion memory,
                                              Program.Result result) {
        Rounds at = new Rounds(System.nanoTime());
        connection.tell(request(0, memory));
        return Behaviors.receive(ConnectionEvent.class)
                .onMessage(RdmaProtocol.Received.class, r -> {
                    long now = System.nanoTime();
                    at.report.record(now - at.sent);
                    at.progress.advance();
                    // r.buffer() reads an answer received in place without copying it; r.data() would copy
                    if (verify ? Payload.check(r.buffer(), size) != at.round : r.size() != size) {
                        at.progress.close();
                        return result.failed("client: round trip " + at.round + " came back wrong");
                    }
                    if (++at.round == warmUp) {
                        at.start = now;
                        at.report.reset();
                    }
                    if (at.round < warmUp + count) {
                        at.sent = now;
                        // the answer's bytes (or receive buffer) go back with the next request
                        connection.tell(request(at.round, memory).releasing(r));
                        return Behaviors.same();
                    }
                    at.progress.close();
                    long elapsed = now - at.start;
                    connection.tell(new RdmaProtocol.Close());
                    return Behaviors.receive(ConnectionEvent.class)
                            .onMessage(RdmaProtocol.Disconnected.class, d -> {
                                result.succeed(String.format("%s: %d round trips of %d bytes after %d to warm up, %s:"
                                        + " mean round trip %.1f us%n%s%n%s", NAME, count, size, warmUp,
                                        (verify ? "every byte verified" : "not verified")
                                                + (zeroCopy ? ", zero copy" : ""), elapsed / 1e3 / count,
                                        at.report.latency("round trip"), Report.throughput(count, size, elapsed)));
                                return Behaviors.stopped();
                            })
                            .build();
                })
                .onMessage(RdmaProtocol.Disconnected.class, d -> {
                    at.progress.close();
                    return result.failed("client: " + Program.describe(d) + " after " + at.round + " of "
                            + (warmUp + count) + " round trips");
                })
                .onAnyMessage(e -> {
                    at.progress.close();
                    return result.unexpected("client", e);
                })
                .build();
    }
}
