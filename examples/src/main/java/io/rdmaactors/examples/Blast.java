package io.rdmaactors.examples;

import io.rdmaactors.actors.Rdma;
import io.rdmaactors.actors.RdmaProtocol;
import io.rdmaactors.actors.RdmaProtocol.ConnectionCommand;
import io.rdmaactors.actors.RdmaProtocol.ConnectionEvent;
import io.rdmaactors.verbs.QueueFullException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * Streams messages as fast as the send queue takes them: the client lets the connection refuse
 * what does not fit (CommandFailed, then WritingSuspended) and sends the refused messages again
 * after WritingResumed. The server checks every message and that each sequence number arrives
 * exactly once, then answers with what it counted.
 */
@Command(name = "blast",
        description = "Stream messages under send-queue flow control; the server verifies every sequence number.")
public final class Blast implements Callable<Integer> {

    @Mixin
    RdmaFlags flags;

    private static final String NAME = "blast";

    @Option(names = {"-C", "--count"}, defaultValue = "20000", description = "messages (default ${DEFAULT-VALUE})")
    int count;

    @Option(names = {"-S", "--size"}, defaultValue = "1024", description = "message bytes, at least 4 (default ${DEFAULT-VALUE})")
    int size;

    @Option(names = {"-V", "--verify"}, negatable = true, defaultValue = "true", fallbackValue = "true",
            description = "the server checks every byte (default; --no-verify checks nothing)")
    boolean verify;

    @Override
    public Integer call() {
        flags.check("--count", count, 1, Integer.MAX_VALUE);
        flags.check("--size", size, Payload.MIN_SIZE, Program.MAX_SIZE);
        Duration limit = Duration.ofSeconds(60 + count / 1000);
        if (flags.role() == RdmaFlags.Role.CLIENT) {
            return Program.run(NAME, flags, Program.bufferFor(size), limit,
                    r -> Behaviors.<ConnectionEvent>setup(c -> new Blaster(c, flags.serverAddress(), r)));
        }
        // the server's buffers fit any size a client announces
        return Program.run(NAME, flags, Program.bufferFor(flags.role() == RdmaFlags.Role.SERVER ? Program.MAX_SIZE
                : size), limit, r -> Program.listener(NAME, flags, r,
                        server -> Behaviors.<ConnectionEvent>setup(c -> new Blaster(c, server, r)),
                        alone -> counter(alone, r)));
    }

    /**
     * The server's agent: verifies each message arrives once and in order (the request's private
     * data says how many and how large), then replies with the count.
     */
    private Behavior<ConnectionEvent> counter(boolean reports, Program.Result result) {
        return Behaviors.receive(ConnectionEvent.class)
                .onMessage(RdmaProtocol.Connected.class, c -> {
                    int messages = Payload.first(c.privateData());
                    int bytes = Payload.second(c.privateData());
                    if (reports) {
                        System.out.println(NAME + " server: client " + c.remote() + " connected");
                    }
                    int[] expected = {0};
                    return Behaviors.receive(ConnectionEvent.class)
                            .onMessage(RdmaProtocol.Received.class, r -> {
                                int seq = verify ? Payload.check(r.data(), bytes) : expected[0];
                                if (seq != expected[0]) {
                                    return result.failed("server: expected message " + expected[0] + ", got " + seq);
                                }
                                if (++expected[0] == messages) {
                                    c.connection().tell(RdmaProtocol.Send.of(Payload.ints(messages, 0), null));
                                }
                                return Behaviors.same();
                            })
                            .onMessage(RdmaProtocol.Disconnected.class, d -> {
                                if (expected[0] != messages) {
                                    return result.failed("server: " + Program.describe(d) + " after " + expected[0]
                                            + " of " + messages + " messages");
                                }
                                if (reports) {
                                    result.succeed(String.format("%s server: %d messages of %d bytes from %s, %s", NAME,
                                            messages, bytes, c.remote(), verify ? "every one verified, once, in order"
                                            : "not verified"));
                                }
                                return Behaviors.stopped();
                            })
                            .onAnyMessage(e -> result.unexpected("server", e))
                            .build();
                })
                .onAnyMessage(e -> result.unexpected("server", e))
                .build();
    }

    /** The client: sends while writing is not suspended, keeps what was refused, resends it on resume. */
    private final class Blaster extends AbstractBehavior<ConnectionEvent> {
        private final Program.Result result;
        /** Sends told and not yet answered: twice what the send queue holds, so it does fill up. */
        private final int window;
        private final TreeSet<Integer> refused = new TreeSet<>();
        private ActorRef<ConnectionCommand> connection;
        private int next;
        private int inFlight;
        private int acked;
        private int resent;
        private int suspensions;
        private boolean suspended;
        private long start;
        private Report.Progress progress;

        Blaster(ActorContext<ConnectionEvent> ctx, InetSocketAddress server, Program.Result result) {
            super(ctx);
            this.result = result;
            this.window = 2 * Rdma.get(ctx.getSystem()).settings().sendQueueDepth();
            Rdma.get(ctx.getSystem()).manager().tell(RdmaProtocol.Connect.to(server, ctx.getSelf()).withPrivateData(Payload.ints(count, size)).withTimeout(Program.CONNECT_TIMEOUT));
        }

        @Override
        public Receive<ConnectionEvent> createReceive() {
            return newReceiveBuilder()
                    .onMessage(RdmaProtocol.Connected.class, c -> {
                        connection = c.connection();
                        progress = Report.Progress.of(NAME + " messages acked", count);
                        start = System.nanoTime();
                        return send();
                    })
                    .onMessage(RdmaProtocol.Acked.class, a -> {
                        inFlight--;
                        acked++;
                        progress.advance();
                        return send();
                    })
                    .onMessage(RdmaProtocol.CommandFailed.class, f -> {
                        if (!(f.cause() instanceof QueueFullException)) {
                            return result.failed("client: " + f);
                        }
                        inFlight--;
                        refused.add((Integer) ((RdmaProtocol.Send) f.command()).ack());
                        return this;
                    })
                    .onMessage(RdmaProtocol.WritingSuspended.class, s -> {
                        suspended = true;
                        suspensions++;
                        // everything sent before this is refused, so the resent stream stays in order
                        connection.tell(new RdmaProtocol.ResumeWriting());
                        return this;
                    })
                    .onMessage(RdmaProtocol.WritingResumed.class, r -> {
                        suspended = false;
                        return send();
                    })
                    .onMessage(RdmaProtocol.Received.class, this::onServerCount)
                    .onAnyMessage(e -> {
                        closeProgress();
                        return result.unexpected("client", e);
                    })
                    .build();
        }

        private Behavior<ConnectionEvent> send() {
            while (!suspended && inFlight < window && (!refused.isEmpty() || next < count)) {
                int seq;
                if (refused.isEmpty()) {
                    seq = next++;
                } else {
                    seq = refused.pollFirst();
                    resent++;
                }
                connection.tell(RdmaProtocol.Send.of(Payload.of(seq, size), seq));
                inFlight++;
            }
            return this;
        }

        /** The server has every message: only acks of the last sends can still be on their way. */
        private Behavior<ConnectionEvent> onServerCount(RdmaProtocol.Received r) {
            long elapsed = System.nanoTime() - start;
            closeProgress();
            if (Payload.first(r.data()) != count) {
                return result.failed("client: the server counted " + Payload.first(r.data()) + " of " + count);
            }
            connection.tell(new RdmaProtocol.Close());
            return Behaviors.receive(ConnectionEvent.class)
                    .onMessage(RdmaProtocol.Acked.class, a -> {
                        acked++;
                        return Behaviors.same();
                    })
                    .onMessage(RdmaProtocol.Disconnected.class, d -> {
                        if (acked != count) {
                            return result.failed("client: " + acked + " of " + count + " sends acked");
                        }
                        result.succeed(String.format("%s: %d messages of %d bytes; writing suspended %d times, %d"
                                + " refused sends resent; %s%n%s", NAME, count, size, suspensions, resent, verify
                                ? "every message arrived once, in order" : "contents not verified",
                                Report.throughput(count, size, elapsed)));
                        return Behaviors.stopped();
                    })
                    .onMessage(RdmaProtocol.WritingResumed.class, w -> Behaviors.same())
                    .onAnyMessage(e -> result.unexpected("client", e))
                    .build();
        }

        private void closeProgress() {
            if (progress != null) {
                progress.close();
            }
        }
    }
}
