package io.rdmaactors.bench;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.rdmaactors.actors.RdmaProtocol;
import io.rdmaactors.verbs.CmId;
import io.rdmaactors.verbs.CompletionChannel;
import io.rdmaactors.verbs.CompletionQueue;
import io.rdmaactors.verbs.EventChannel;
import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.PortSpace;
import io.rdmaactors.verbs.ProtectionDomain;
import io.rdmaactors.verbs.QpInitAttributes;
import io.rdmaactors.verbs.QueuePair;
import io.rdmaactors.verbs.ReceiveWorkRequest;
import io.rdmaactors.verbs.SendWorkRequest;
import io.rdmaactors.verbs.WcOpcode;
import io.rdmaactors.verbs.WorkCompletion;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/**
 * What the actors cost over the bare SPI on the soft fabric, in one run: 64-byte ping-pong round
 * trips and one-way streaming. Both sides wait for completions the same way: they poll for
 * {@code rdma-actors.completion-spin} after the last completion (and {@code completion-yield} more,
 * yielding between polls; one end per two cores at a time), then arm the CQ and sleep on its
 * completion channel, so the ratio is the actor layer's own cost.
 *
 * <p>{@code java -cp "bench/target/classes:$(cat bench/target/classpath.txt)" io.rdmaactors.bench.ActorVersusVerbs}
 */
public final class ActorVersusVerbs {

    private static final int SIZE = 64;
    private static final int ROUND_TRIPS = 20_000;
    private static final int STREAMED = 200_000;
    private static final int WINDOW = 32;
    private static final Duration STEP = Duration.ofSeconds(10);
    private static final Config CONFIG = ConfigFactory.load();
    /** The actors' hybrid wait, which the bare side copies. */
    private static final long SPIN_NANOS = CONFIG.getDuration("rdma-actors.completion-spin").toNanos();
    private static final long YIELD_NANOS = CONFIG.getDuration("rdma-actors.completion-yield").toNanos();
    /** As the QP actors spin: one end per two cores at a time. */
    private static final Semaphore SPIN_TURNS = new Semaphore(Math.max(1,
            Runtime.getRuntime().availableProcessors() / 2));

    private ActorVersusVerbs() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        System.out.printf("ActorVersusVerbs: %d rounds; completion-spin %d us, completion-yield %d us; %s%n", rounds,
                SPIN_NANOS / 1000, YIELD_NANOS / 1000, BenchSupport.defaultDispatcher(CONFIG));
        double[] verbsRtt = new double[rounds];
        double[] actorRtt = new double[rounds];
        double[] verbsRate = new double[rounds];
        double[] actorRate = new double[rounds];
        for (int round = 0; round <= rounds; round++) {
            // round 0 warms the JIT up and is not reported
            double vRtt = verbsPingPong();
            double aRtt = actorPingPong();
            double vRate = verbsStream();
            double aRate = actorStream();
            if (round > 0) {
                System.out.printf("round %d: ping-pong verbs %.2f us, actors %.2f us; streaming verbs %.0f msg/s, "
                        + "actors %.0f msg/s%n", round, vRtt, aRtt, vRate, aRate);
                verbsRtt[round - 1] = vRtt;
                actorRtt[round - 1] = aRtt;
                verbsRate[round - 1] = vRate;
                actorRate[round - 1] = aRate;
            }
        }
        // each round runs both sides back to back: the median of the per-round ratios cancels drift
        double rtt = BenchSupport.pairedRatio(actorRtt, verbsRtt);
        double rate = BenchSupport.pairedRatio(actorRate, verbsRate);
        System.out.printf("SUMMARY ActorVersusVerbs: median of %d paired rounds: ping-pong round trip actors/verbs"
                + " = %.2fx%s; streaming actors/verbs = %.2fx%s%n", rounds,
                rtt, rtt <= 1.3 ? " (<= 1.3x)" : " MISSED (target <= 1.3x)",
                rate, rate >= 0.9 ? " (>= 0.9x)" : " MISSED (target >= 0.9x)");
    }

    // ------------------------------------------------------------------ the bare SPI

    /** One side of a verbs connection: its id, CQ on a completion channel, QP and two buffers. */
    private static final class Side implements AutoCloseable {
        final CmId id;
        final ProtectionDomain pd;
        final CompletionChannel channel;
        final CompletionQueue cq;
        final QueuePair qp;
        final MemoryRegion send;
        final MemoryRegion recv;
        final WorkCompletion[] one = new WorkCompletion[1];

        Side(CmId id) {
            this.id = id;
            pd = id.device().allocateProtectionDomain();
            channel = id.device().createCompletionChannel();
            cq = id.device().createCompletionQueue(256, channel);
            qp = id.createQueuePair(pd, QpInitAttributes.rc(cq, 64, 64));
            send = pd.register(ByteBuffer.allocateDirect(SIZE));
            recv = pd.register(ByteBuffer.allocateDirect(64 * SIZE));
            for (int slot = 0; slot < 64; slot++) {
                repost(slot);
            }
        }

        void repost(int slot) {
            qp.postReceive(ReceiveWorkRequest.of(slot, recv.sge(slot * SIZE, SIZE)));
        }

        /** The next completion: polling for the spin, then sleeping on the channel, as the QP actor does. */
        WorkCompletion next() throws Exception {
            while (true) {
                long start = System.nanoTime();
                long waited;
                // without a spin turn: one poll, then arm and sleep
                boolean turn = SPIN_TURNS.tryAcquire();
                try {
                    do {
                        if (cq.poll(one) == 1) {
                            return one[0];
                        }
                        waited = System.nanoTime() - start;
                        if (waited >= SPIN_NANOS && waited < SPIN_NANOS + YIELD_NANOS) {
                            Thread.yield();
                        }
                    } while (turn && waited < SPIN_NANOS + YIELD_NANOS);
                } finally {
                    if (turn) {
                        SPIN_TURNS.release();
                    }
                }
                cq.requestNotify(false);
                if (cq.poll(one) == 1) {
                    return one[0];
                }
                if (channel.await(STEP) == null) {
                    throw new IllegalStateException("no completion within " + STEP);
                }
                cq.ackEvents(1);
            }
        }

        WorkCompletion nextReceive() throws Exception {
            WorkCompletion wc;
            do {
                wc = next();
                if (!wc.isSuccess()) {
                    throw new IllegalStateException("work request failed: " + wc);
                }
            } while (wc.opcode() != WcOpcode.RECV);
            return wc;
        }

        @Override
        public void close() {
            id.destroyQueuePair();
            send.close();
            recv.close();
            cq.close();
            channel.close();
            pd.close();
            id.close();
        }
    }

    private interface Run {
        double apply(Side client, Side server) throws Exception;
    }

    private static double withVerbsPair(Run run) throws Exception {
        try (Fabric fabric = Fabric.open("soft")) {
            EventChannel events = fabric.createEventChannel();
            CmId listener = fabric.createCmId(events, PortSpace.TCP);
            listener.bind(new InetSocketAddress("127.0.0.1", 0));
            listener.listen(1);
            List<Side> ends = BenchSupport.connectEnds(fabric, events, listener, Side::new, STEP);
            Side client = ends.get(0);
            Side server = ends.get(1);
            double result = run.apply(client, server);
            client.close();
            server.close();
            listener.close();
            events.close();
            if (fabric.ledger().total() != 0) {
                throw new IllegalStateException("leaked: " + fabric.ledger());
            }
            return result;
        }
    }

    /** Mean round trip in microseconds. */
    private static double verbsPingPong() throws Exception {
        return withVerbsPair((client, server) -> {
            Thread echo = new Thread(() -> {
                try {
                    for (int i = 0; i < ROUND_TRIPS; i++) {
                        WorkCompletion wc = server.nextReceive();
                        server.repost((int) wc.wrId());
                        server.qp.postSend(SendWorkRequest.send(0, server.send.sge(0, SIZE)));
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }, "bench-echo");
            echo.start();
            long start = System.nanoTime();
            for (int i = 0; i < ROUND_TRIPS; i++) {
                client.qp.postSend(SendWorkRequest.send(0, client.send.sge(0, SIZE)));
                WorkCompletion wc = client.nextReceive();
                client.repost((int) wc.wrId());
            }
            long elapsed = System.nanoTime() - start;
            echo.join();
            return elapsed / 1000.0 / ROUND_TRIPS;
        });
    }

    /** Messages per second, received and counted. */
    private static double verbsStream() throws Exception {
        return withVerbsPair((client, server) -> {
            CompletableFuture<Long> done = new CompletableFuture<>();
            Thread sink = new Thread(() -> {
                try {
                    for (int i = 0; i < STREAMED; i++) {
                        server.repost((int) server.nextReceive().wrId());
                    }
                    done.complete(System.nanoTime());
                } catch (Exception e) {
                    done.completeExceptionally(e);
                }
            }, "bench-sink");
            sink.start();
            long start = System.nanoTime();
            int outstanding = 0;
            for (int i = 0; i < STREAMED; i++) {
                while (outstanding >= WINDOW) {
                    if (client.next().opcode() == WcOpcode.SEND) {
                        outstanding--;
                    }
                }
                client.qp.postSend(SendWorkRequest.send(i, client.send.sge(0, SIZE)));
                outstanding++;
            }
            long end = done.get(60, TimeUnit.SECONDS);
            while (outstanding > 0) {
                if (client.next().opcode() == WcOpcode.SEND) {
                    outstanding--;
                }
            }
            sink.join();
            return STREAMED / ((end - start) / 1e9);
        });
    }

    // ------------------------------------------------------------------ the actors

    private static double withActors(Function<CompletableFuture<Double>, Behavior<RdmaProtocol.ConnectionEvent>> client,
                                     Behavior<RdmaProtocol.ConnectionEvent> serverHandler)
            throws Exception {
        CompletableFuture<Double> result = new CompletableFuture<>();
        ActorSystem<Void> system = ActorSystem.create(Behaviors.setup(ctx -> {
            ActorRef<RdmaProtocol.ConnectionEvent> handler = ctx.spawn(serverHandler, "server-handler");
            ctx.spawn(BenchSupport.selfConnecting(new InetSocketAddress("127.0.0.1", 0), handler,
                    listenCtx -> listenCtx.spawn(client.apply(result), "client"), STEP), "listener");
            return Behaviors.empty();
        }), "bench", ConfigFactory.parseString("pekko.loglevel = WARNING").withFallback(CONFIG));
        try {
            return result.get(120, TimeUnit.SECONDS);
        } finally {
            system.terminate();
            system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
    }

    private static double actorPingPong() throws Exception {
        byte[] message = new byte[SIZE];
        return withActors(result -> Behaviors.setup(ctx -> {
            long[] start = new long[1];
            int[] count = new int[1];
            AtomicReference<ActorRef<RdmaProtocol.ConnectionCommand>> connection = new AtomicReference<>();
            return Behaviors.receive(RdmaProtocol.ConnectionEvent.class)
                    .onMessage(RdmaProtocol.Connected.class, c -> {
                        connection.set(c.connection());
                        start[0] = System.nanoTime();
                        connection.get().tell(RdmaProtocol.Send.of(message, null));
                        return Behaviors.same();
                    })
                    .onMessage(RdmaProtocol.Received.class, r -> {
                        if (++count[0] == ROUND_TRIPS) {
                            result.complete((System.nanoTime() - start[0]) / 1000.0 / ROUND_TRIPS);
                        } else {
                            connection.get().tell(RdmaProtocol.Send.of(message, null));
                        }
                        return Behaviors.same();
                    })
                    .onMessage(RdmaProtocol.ConnectionEvent.class, e -> Behaviors.same())
                    .build();
        }), EchoSinkPeer.echo());
    }

    private static double actorStream() throws Exception {
        byte[] message = new byte[SIZE];
        CompletableFuture<Long> received = new CompletableFuture<>();
        Behavior<RdmaProtocol.ConnectionEvent> sink = Behaviors.setup(ctx -> {
            int[] count = new int[1];
            return Behaviors.receive(RdmaProtocol.ConnectionEvent.class)
                    .onMessage(RdmaProtocol.Received.class, r -> {
                        if (++count[0] == STREAMED) {
                            received.complete(System.nanoTime());
                        }
                        return Behaviors.same();
                    })
                    .onMessage(RdmaProtocol.ConnectionEvent.class, e -> Behaviors.same())
                    .build();
        });
        return withActors(result -> Behaviors.setup(ctx -> {
            long[] start = new long[1];
            int[] sent = new int[1];
            AtomicReference<ActorRef<RdmaProtocol.ConnectionCommand>> connection = new AtomicReference<>();
            return Behaviors.receive(RdmaProtocol.ConnectionEvent.class)
                    .onMessage(RdmaProtocol.Connected.class, c -> {
                        connection.set(c.connection());
                        start[0] = System.nanoTime();
                        received.thenAccept(end -> result.complete(STREAMED / ((end - start[0]) / 1e9)));
                        for (; sent[0] < WINDOW; sent[0]++) {
                            connection.get().tell(RdmaProtocol.Send.of(message, sent[0]));
                        }
                        return Behaviors.same();
                    })
                    .onMessage(RdmaProtocol.Acked.class, a -> {
                        if (sent[0] < STREAMED) {
                            connection.get().tell(RdmaProtocol.Send.of(message, sent[0]++));
                        }
                        return Behaviors.same();
                    })
                    .onMessage(RdmaProtocol.ConnectionEvent.class, e -> Behaviors.same())
                    .build();
        }), sink);
    }
}
