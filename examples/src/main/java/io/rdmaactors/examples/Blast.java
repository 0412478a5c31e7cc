package io.rdmaactors.examples;

import io.rdmaactors.actors.Rdma;
import io.rdmaactors.actors.RdmaProtocol;
import io.rdmaactors.actors.RdmaProtocol.ConnectionCommand;
import io.rdmaactors.actors.RdmaProtocol.ConnectionEvent;
import io.rdmaactors.actors.RdmaProtocol.ListenerEvent;
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

    @Option(names = "--count", defaultValue = "20000", description = "messages")
    int count;

    @Option(names = "--size", defaultValue = "1024", description = "message bytes (at least 4)")
    int size;

    @Override
    public Integer call() {
        return Program.run("blast", flags, Program.bufferFor(size), Duration.ofSeconds(60), this::listener);
    }

    private Behavior<ListenerEvent> listener(Program.Result result) {
        return Behaviors.setup(ctx -> {
            Rdma.get(ctx.getSystem()).manager().tell(new RdmaProtocol.Listen(flags.bind(), ctx.getSelf(), 8));
            return Behaviors.receive(ListenerEvent.class)
                    .onMessage(RdmaProtocol.Listening.class, l -> {
                        ctx.spawn(Behaviors.<ConnectionEvent>setup(c -> new Blaster(c, l.localAddress(), result)), "client");
                        return Behaviors.same();
                    })
                    .onMessage(RdmaProtocol.ConnectionRequested.class, r -> {
                        r.connection().tell(new RdmaProtocol.Accept(ctx.spawnAnonymous(counter(result)), null));
                        return Behaviors.same();
                    })
                    .onAnyMessage(e -> result.unexpected("listener", e))
                    .build();
        });
    }

    /** The server's agent: verifies each message arrives once and in order, then replies with the count. */
    private Behavior<ConnectionEvent> counter(Program.Result result) {
        return Behaviors.receive(ConnectionEvent.class)
                .onMessage(RdmaProtocol.Connected.class, c -> {
                    int[] expected = {0};
                    return Behaviors.receive(ConnectionEvent.class)
                            .onMessage(RdmaProtocol.Received.class, r -> {
                                int seq = Payload.check(r.data(), size);
                                if (seq != expected[0]) {
                                    return result.failed("server: expected message " + expected[0] + ", got " + seq);
                                }
                                if (++expected[0] == count) {
                                    c.connection().tell(RdmaProtocol.Send.of(Payload.ints(count, 0), null));
                                }
                                return Behaviors.same();
                            })
                            .onMessage(RdmaProtocol.Disconnected.class, d -> Behaviors.stopped())
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

        Blaster(ActorContext<ConnectionEvent> ctx, InetSocketAddress server, Program.Result result) {
            super(ctx);
            this.result = result;
            this.window = 2 * Rdma.get(ctx.getSystem()).settings().sendQueueDepth();
            Rdma.get(ctx.getSystem()).manager().tell(new RdmaProtocol.Connect(server, ctx.getSelf(),
                    null, Program.CONNECT_TIMEOUT));
        }

        @Override
        public Receive<ConnectionEvent> createReceive() {
            return newReceiveBuilder()
                    .onMessage(RdmaProtocol.Connected.class, c -> {
                        connection = c.connection();
                        start = System.nanoTime();
                        return send();
                    })
                    .onMessage(RdmaProtocol.Acked.class, a -> {
                        inFlight--;
                        acked++;
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
                    .onAnyMessage(e -> result.unexpected("client", e))
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
            double seconds = (System.nanoTime() - start) / 1e9;
            if (Payload.first(r.data()) != count) {
                return result.failed("client: the server counted " + Payload.first(r.data()) + " of " + count);
            }
            connection.tell(new RdmaProtocol.Disconnect());
            return Behaviors.receive(ConnectionEvent.class)
                    .onMessage(RdmaProtocol.Acked.class, a -> {
                        acked++;
                        return Behaviors.same();
                    })
                    .onMessage(RdmaProtocol.Disconnected.class, d -> {
                        if (acked != count) {
                            return result.failed("client: " + acked + " of " + count + " sends acked");
                        }
                        result.succeed(String.format("blast: %d messages of %d bytes in %.2f s: %.0f messages/s,"
                                + " %.1f MB/s; writing suspended %d times, %d refused sends resent; every message arrived"
                                + " once, in order", count, size, seconds, count / seconds, count * (double) size
                                / seconds / 1e6, suspensions, resent));
                        return Behaviors.stopped();
                    })
                    .onMessage(RdmaProtocol.WritingResumed.class, w -> Behaviors.same())
                    .onAnyMessage(e -> result.unexpected("client", e))
                    .build();
        }
    }
}
