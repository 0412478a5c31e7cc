package io.rdmaactors.bench;

import com.typesafe.config.ConfigFactory;
import io.rdmaactors.actors.Rdma;
import io.rdmaactors.actors.RdmaProtocol;
import io.rdmaactors.actors.streams.RdmaStreams;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.AbstractActor;
import org.apache.pekko.actor.Props;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.io.Tcp;
import org.apache.pekko.io.TcpMessage;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.javadsl.Framing;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.util.ByteString;

/**
 * The child process of {@link ActorVersusPekkoTcp}: an echo server and a sink server on each
 * transport, rdma-actors on the soft fabric and Pekko IO TCP, and a Streams echo server on each
 * (RdmaStreams; Pekko Streams Tcp with Pekko's simple framing, so both echo whole messages), all on
 * 127.0.0.1. It prints {@code PORTS rdmaEcho rdmaSink
 * tcpEcho tcpSink rdmaStreamsEcho tcpStreamsEcho} and runs until its standard input closes.
 * A sink counts what it receives and answers the last message (RDMA: a Send with an immediate;
 * TCP: the byte total announced in the first 8 bytes) with 8 bytes, so the sender can time the
 * stream to its delivery.
 */
public final class EchoSinkPeer {

    /** More than IdleConnections keeps in flight, so no request is refused for want of room. */
    private static final int BACKLOG = 512;
    /** The largest framed message on Pekko Streams Tcp: rdma-actors.max-message-size's default. */
    static final int FRAME = 16 << 20;

    private EchoSinkPeer() {
    }

    public static void main(String[] args) throws Exception {
        int bufferSize = Integer.parseInt(args[0]);
        CompletableFuture<int[]> ports = new CompletableFuture<>();
        ActorSystem<Void> system = ActorSystem.create(Behaviors.setup(ctx -> {
            List<ActorRef<InetSocketAddress>> slots = portSlots(ctx, ports);
            ctx.spawn(listener(ctx.getSystem(), echo(), slots.get(0), RdmaProtocol.ConnectionOptions.none()),
                    "rdma-echo");
            // a reader of a stream takes what each poll found at once, as Pekko IO's reader does
            ctx.spawn(listener(ctx.getSystem(), sink(), slots.get(1),
                    RdmaProtocol.ConnectionOptions.none().withReceivedBatches()), "rdma-sink");
            Adapter.actorOf(ctx, TcpServer.props(Props.create(TcpEcho.class, () -> new TcpEcho(false)), slots.get(2)), "tcp-echo");
            Adapter.actorOf(ctx, TcpServer.props(Props.create(TcpSink.class, TcpSink::new), slots.get(3)), "tcp-sink");
            Adapter.actorOf(ctx, TcpServer.props(Props.create(TcpEcho.class, () -> new TcpEcho(true)),
                    slots.get(4)), "tcp-message-echo");
            return Behaviors.empty();
        }), "peer", ConfigFactory.parseString("pekko.loglevel = WARNING\nrdma-actors.buffer-size = " + bufferSize)
                .withFallback(ConfigFactory.load()));
        int[] p = ports.get(30, TimeUnit.SECONDS);
        Flow<ByteString, ByteString, NotUsed> identity = Flow.create();
        int rdmaStreams = RdmaStreams.get(system).bind("127.0.0.1", 0)
                .to(Sink.foreach(c -> c.handleWith(identity, system))).run(system)
                .toCompletableFuture().get(30, TimeUnit.SECONDS).localAddress().getPort();
        // TCP carries bytes: the echo frames its messages as RdmaStreams does, to deliver the same elements
        Flow<ByteString, ByteString, NotUsed> framedEcho = Framing.simpleFramingProtocol(FRAME).reversed()
                .join(identity);
        int tcpStreams = org.apache.pekko.stream.javadsl.Tcp.get(system).bind("127.0.0.1", 0)
                .to(Sink.foreach(c -> c.handleWith(framedEcho, system))).run(system)
                .toCompletableFuture().get(30, TimeUnit.SECONDS).localAddress().getPort();
        System.out.printf("PORTS %d %d %d %d %d %d %d%n", p[0], p[1], p[2], p[3], rdmaStreams, tcpStreams, p[4]);
        System.out.flush();
        try {
            while (System.in.read() >= 0) {
                // runs until the parent closes our standard input
            }
        } catch (IOException e) {
            // the parent went away: stop as well
        }
        system.terminate();
        system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    /** One actor per server that records its port; the last one completes {@code ports}. */
    private static List<ActorRef<InetSocketAddress>> portSlots(ActorContext<Void> ctx, CompletableFuture<int[]> ports) {
        int[] bound = new int[5];
        int[] left = {bound.length};
        List<ActorRef<InetSocketAddress>> slots = new ArrayList<>();
        for (int i = 0; i < bound.length; i++) {
            int slot = i;
            slots.add(ctx.spawn(Behaviors.<InetSocketAddress>receiveMessage(a -> {
                synchronized (bound) { // one actor per server, each on its own thread
                    bound[slot] = a.getPort();
                    if (--left[0] == 0) {
                        ports.complete(bound.clone());
                    }
                }
                return Behaviors.stopped();
            }), "port-" + i));
        }
        return slots;
    }

    private static Behavior<RdmaProtocol.ListenerEvent> listener(ActorSystem<?> system,
                                                                  Behavior<RdmaProtocol.ConnectionEvent> handler,
                                                                  ActorRef<InetSocketAddress> bound,
                                                                  RdmaProtocol.ConnectionOptions options) {
        return Behaviors.setup(ctx -> {
            Rdma.get(system).manager().tell(new RdmaProtocol.Listen(new InetSocketAddress("127.0.0.1", 0),
                    ctx.getSelf(), BACKLOG).withOptions(options));
            return Behaviors.receive(RdmaProtocol.ListenerEvent.class)
                    .onMessage(RdmaProtocol.Listening.class, l -> {
                        bound.tell(l.localAddress());
                        return Behaviors.same();
                    })
                    .onMessage(RdmaProtocol.ConnectionRequested.class, r -> {
                        r.connection().tell(new RdmaProtocol.Accept(ctx.spawnAnonymous(handler, handlerProps(system)),
                                null));
                        return Behaviors.same();
                    })
                    .onMessage(RdmaProtocol.ListenerEvent.class, e -> Behaviors.same())
                    .build();
        });
    }

    /**
     * Where the benchmarks' rdma-actors handlers run: Pekko's default dispatcher, or with
     * {@code -Dbench.handlers=data-path} rdma-actors' own (docs/tuning.md), in both processes.
     */
    static org.apache.pekko.actor.typed.Props handlerProps(ActorSystem<?> system) {
        return "data-path".equals(System.getProperty("bench.handlers")) ? Rdma.get(system).dispatcher()
                : org.apache.pekko.actor.typed.Props.empty();
    }

    @SuppressWarnings("unchecked")
    static ActorRef<RdmaProtocol.ConnectionCommand> connection(ActorRef<?> ref) {
        return (ActorRef<RdmaProtocol.ConnectionCommand>) ref;
    }

    /** Sends every message back. */
    static Behavior<RdmaProtocol.ConnectionEvent> echo() {
        return Behaviors.setup(ctx -> {
            ActorRef<?>[] peer = new ActorRef<?>[1];
            return Behaviors.receive(RdmaProtocol.ConnectionEvent.class)
                    .onMessage(RdmaProtocol.Connected.class, c -> {
                        peer[0] = c.connection();
                        return Behaviors.same();
                    })
                    .onMessage(RdmaProtocol.Received.class, r -> {
                        connection(peer[0]).tell(RdmaProtocol.Send.of(r.data(), null));
                        return Behaviors.same();
                    })
                    .onMessage(RdmaProtocol.Disconnected.class, d -> Behaviors.stopped())
                    .onMessage(RdmaProtocol.ConnectionEvent.class, e -> Behaviors.same())
                    .build();
        });
    }

    /**
     * Counts messages, a poll's at a time; the one with an immediate ends the stream and is answered
     * with the count.
     */
    private static Behavior<RdmaProtocol.ConnectionEvent> sink() {
        return Behaviors.setup(ctx -> {
            ActorRef<?>[] peer = new ActorRef<?>[1];
            long[] count = new long[1];
            return Behaviors.receive(RdmaProtocol.ConnectionEvent.class)
                    .onMessage(RdmaProtocol.Connected.class, c -> {
                        peer[0] = c.connection();
                        return Behaviors.same();
                    })
                    .onMessage(RdmaProtocol.ReceivedBatch.class, b -> {
                        for (RdmaProtocol.Received r : b.messages()) {
                            if (r.immediate() != null) {
                                connection(peer[0]).tell(RdmaProtocol.Send.of(
                                        ByteBuffer.allocate(8).putLong(count[0]).array(), null));
                                count[0] = 0;
                            } else {
                                count[0]++;
                            }
                        }
                        return Behaviors.same();
                    })
                    .onMessage(RdmaProtocol.Disconnected.class, d -> Behaviors.stopped())
                    .onMessage(RdmaProtocol.ConnectionEvent.class, e -> Behaviors.same())
                    .build();
        });
    }

    /** A Pekko IO TCP server: each connection echoes, or sinks and answers its announced total. */
    static final class TcpServer extends AbstractActor {
        private final Props handler;
        private final ActorRef<InetSocketAddress> bound;

        private TcpServer(Props handler, ActorRef<InetSocketAddress> bound) {
            this.handler = handler;
            this.bound = bound;
        }

        /** A server that hands each connection to a new actor of {@code handler}. */
        static Props props(Props handler, ActorRef<InetSocketAddress> bound) {
            return Props.create(TcpServer.class, () -> new TcpServer(handler, bound));
        }

        @Override
        public void preStart() {
            Tcp.get(getContext().getSystem()).manager().tell(
                    TcpMessage.bind(getSelf(), new InetSocketAddress("127.0.0.1", 0), BACKLOG), getSelf());
        }

        @Override
        public Receive createReceive() {
            return receiveBuilder()
                    .match(Tcp.Bound.class, b -> bound.tell(b.localAddress()))
                    .match(Tcp.Connected.class, c -> {
                        getSender().tell(TcpMessage.register(getContext().actorOf(handler)), getSelf());
                    })
                    .build();
        }
    }

    /**
     * Echoes what it receives with ack-based writing, as Pekko IO wants: one write in flight, what
     * arrives meanwhile gathered into the next (a 16 MiB message arrives in many pieces). A byte echo
     * sends a large message's first bytes back while its last ones still arrive; a message echo
     * (each framed by a 4-byte length) writes a message back once all of it came, as an application
     * with a message protocol over TCP must, and as an RDMA Send is delivered.
     */
    static final class TcpEcho extends AbstractActor {
        private static final Tcp.Event WRITTEN = new Tcp.Event() {
        };
        private final boolean messages;
        /** Message echo: the part of a message that came so far. */
        private ByteString partial = ByteString.emptyByteString();
        private ByteString unsent = ByteString.emptyByteString();
        private boolean writing;

        TcpEcho(boolean messages) {
            this.messages = messages;
        }

        @Override
        public Receive createReceive() {
            return receiveBuilder()
                    .match(Tcp.Received.class, r -> {
                        if (messages) {
                            gatherMessages(r.data());
                        } else {
                            unsent = unsent.concat(r.data());
                        }
                        write();
                    })
                    .matchEquals(WRITTEN, w -> {
                        writing = false;
                        write();
                    })
                    .match(Tcp.ConnectionClosed.class, c -> getContext().stop(getSelf()))
                    .build();
        }

        private void gatherMessages(ByteString data) {
            partial = partial.concat(data);
            while (partial.size() >= 4) {
                int frame = 4 + partial.take(4).toByteBuffer().getInt();
                if (partial.size() < frame) {
                    return;
                }
                unsent = unsent.concat(partial.take(frame));
                partial = partial.drop(frame);
            }
        }

        private void write() {
            if (!writing && !unsent.isEmpty()) {
                writing = true;
                getSender().tell(TcpMessage.write(unsent, WRITTEN), getSelf());
                unsent = ByteString.emptyByteString();
            }
        }
    }

    /** The first 8 bytes announce how many follow; when all came, 8 bytes go back. */
    static final class TcpSink extends AbstractActor {
        private ByteString header = ByteString.emptyByteString();
        private long expected = -1;
        private long received;

        @Override
        public Receive createReceive() {
            return receiveBuilder()
                    .match(Tcp.Received.class, r -> {
                        ByteString data = r.data();
                        if (expected < 0) {
                            header = header.concat(data);
                            if (header.size() < 8) {
                                return;
                            }
                            expected = header.toByteBuffer().getLong();
                            data = header.drop(8);
                            header = ByteString.emptyByteString();
                        }
                        received += data.size();
                        if (received == expected) {
                            getSender().tell(TcpMessage.write(ByteString.fromArray(
                                    ByteBuffer.allocate(8).putLong(received).array())), getSelf());
                            expected = -1;
                            received = 0;
                        }
                    })
                    .match(Tcp.ConnectionClosed.class, c -> getContext().stop(getSelf()))
                    .build();
        }
    }
}
