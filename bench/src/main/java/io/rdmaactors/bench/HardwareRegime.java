package io.rdmaactors.bench;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.rdmaactors.actors.LocalRegion;
import io.rdmaactors.actors.Rdma;
import io.rdmaactors.actors.RdmaProtocol;
import io.rdmaactors.verbs.CmId;
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
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.util.ByteString;

/**
 * The actor layer where the network costs what a NIC's does: one JVM, the soft fabric with
 * {@code wire=sync} (a request is carried inside its post, as a NIC's doorbell starts it at once),
 * the actor API with library defaults (handler, QP actor, verbs, and back, both ends through the
 * public API) against the bare SPI with one busy-polling thread per end. 64 B and 4 KiB ping-pong
 * (p50, p99, p99.9 of each round trip), then a 64 B one-way stream; rounds of the actors and the
 * bare loop interleaved, medians and ranges reported; {@code SUMMARY HardwareRegime:} gives each
 * ratio and MISSED beside each target missed.
 *
 * <p>{@code java -cp "bench/target/classes:$(cat bench/target/classpath.txt)" io.rdmaactors.bench.HardwareRegime}
 */
public final class HardwareRegime {

    private static final String USAGE = "HardwareRegime [--rounds=7] [--round-trips=100000] [--warm-up=200000]"
            + " [--streamed=2000000] [--provider=soft|jna] [--address=127.0.0.1, the RDMA device's on jna]";
    private static final Duration STEP = Duration.ofSeconds(10);
    private static final int DEPTH = 256;
    /** The bare stream's window: messages posted and not yet completed. */
    private static final int WINDOW = 128;
    /** The actor stream asks for an Acked every this many Sends, and keeps WINDOW of them unacknowledged. */
    private static final int ACK_EVERY = 16;
    /** -Dbench.handlers=default: the handlers on Pekko's default dispatcher instead. */
    private static final boolean HANDLERS_ON_DEFAULT = "default".equals(System.getProperty("bench.handlers"));

    private HardwareRegime() {
    }

    public static void main(String[] args) {
        BenchSupport.runOrReport("HardwareRegime", () -> run(new BenchSupport.Options(args, USAGE, "rounds",
                "round-trips", "warm-up", "streamed", "provider", "address")));
    }

    private static void run(BenchSupport.Options options) throws Exception {
        int rounds = options.integer("rounds", 7, 1);
        int roundTrips = options.integer("round-trips", 100_000, 1000);
        int warmUp = options.integer("warm-up", 200_000, 1000);
        int streamed = options.integer("streamed", 2_000_000, 10_000);
        String provider = options.string("provider", "soft");
        String address = options.string("address", "127.0.0.1");
        Map<String, String> fabricOptions = provider.equals("soft") ? Map.of("wire", "sync") : Map.of();
        // an emulated guest (the jna run under qemu) starts the logger slower than Pekko's 5 s
        Config config = ConfigFactory.parseString("pekko.loglevel = WARNING\npekko.logger-startup-timeout = 60s"
                + "\nrdma-actors.fabric = " + provider
                + (provider.equals("soft") ? "\nrdma-actors.fabric-options.wire = sync" : ""))
                .withFallback(ConfigFactory.load());
        System.out.printf("HardwareRegime: provider %s %s, %d rounds of %d round trips after %d, %d streamed;"
                        + " handlers on the %s dispatcher; %s%n", provider, fabricOptions, rounds, roundTrips, warmUp,
                streamed, HANDLERS_ON_DEFAULT ? "default" : "data path's", BenchSupport.defaultDispatcher(config));

        int[] sizes = {64, 4096};
        Series[] bare = {new Series(), new Series()};
        Series[] actors = {new Series(), new Series()};
        double[] bareRate = new double[rounds];
        double[] actorRate = new double[rounds];
        double[] bareAllocated = new double[rounds];
        double[] actorAllocated = new double[rounds];
        try (BarePair bare64 = new BarePair(provider, fabricOptions, address, 64);
             BarePair bare4k = new BarePair(provider, fabricOptions, address, 4096);
             ActorPair actorPair = new ActorPair(config, address)) {
            BarePair[] barePairs = {bare64, bare4k};
            // the ping-pongs first, then the streams: a stream run between them leaves the JIT's
            // profile of the actors' code shaped by it, and a round trip 0.1-0.2 us slower
            // (performance.md); a JVM that only answers requests never pays that
            for (int s = 0; s < sizes.length; s++) {
                barePairs[s].pingPong(warmUp);
                actorPair.pingPong(sizes[s], warmUp);
            }
            for (int round = 0; round < rounds; round++) {
                for (int s = 0; s < sizes.length; s++) {
                    long before = BenchSupport.allocatedBytes();
                    bare[s].add(barePairs[s].pingPong(roundTrips));
                    long between = BenchSupport.allocatedBytes();
                    actors[s].add(actorPair.pingPong(sizes[s], roundTrips));
                    if (s == 0) {
                        bareAllocated[round] = (between - before + barePairs[s].echoAllocated) / (double) roundTrips;
                        actorAllocated[round] = (BenchSupport.allocatedBytes() - between) / (double) roundTrips;
                    }
                }
                System.out.printf("round %d: 64 B p50 bare %.2f us, actors %.2f us; 4 KiB p50 bare %.2f us, actors"
                                + " %.2f us%n", round + 1, bare[0].last(0.5), actors[0].last(0.5), bare[1].last(0.5),
                        actors[1].last(0.5));
            }
            barePairs[0].stream(streamed / 4);
            actorPair.stream(streamed / 4);
            for (int round = 0; round < rounds; round++) {
                bareRate[round] = barePairs[0].stream(streamed);
                actorRate[round] = actorPair.stream(streamed);
                System.out.printf("stream round %d: 64 B bare %,.0f msg/s, actors %,.0f msg/s%n", round + 1,
                        bareRate[round], actorRate[round]);
            }
        }

        List<String> summary = new ArrayList<>();
        for (int s = 0; s < sizes.length; s++) {
            String size = sizes[s] == 64 ? "64 B" : "4 KiB";
            for (double p : new double[] {0.5, 0.99, 0.999}) {
                double a = actors[s].median(p);
                double b = bare[s].median(p);
                System.out.printf("ping-pong %s p%s: actors %.2f us [%.2f-%.2f], bare %.2f us [%.2f-%.2f], %.2fx%n",
                        size, pName(p), a, actors[s].min(p), actors[s].max(p), b, bare[s].min(p), bare[s].max(p),
                        a / b);
                double target = p == 0.5 ? 1.5 : p == 0.99 ? 3.0 : Double.NaN;
                summary.add(String.format("%s p%s %.2fx%s", size, pName(p), a / b,
                        Double.isNaN(target) ? "" : a / b <= target ? " (<= " + target + "x)"
                                : " MISSED (target <= " + target + "x)"));
            }
        }
        System.out.printf("allocated per 64 B round trip, both ends: actors %,.0f B [%,.0f-%,.0f], bare %,.0f B%n",
                BenchSupport.median(actorAllocated), BenchSupport.least(actorAllocated),
                BenchSupport.best(actorAllocated), BenchSupport.median(bareAllocated));
        double rateA = BenchSupport.median(actorRate);
        double rateB = BenchSupport.median(bareRate);
        System.out.printf("stream 64 B: actors %,.0f msg/s [%,.0f-%,.0f], bare %,.0f msg/s [%,.0f-%,.0f], %.2fx%n",
                rateA, BenchSupport.least(actorRate), BenchSupport.best(actorRate), rateB, BenchSupport.least(bareRate),
                BenchSupport.best(bareRate), rateA / rateB);
        summary.add(String.format("stream 64 B %.2fx%s, %,.0f msg/s%s", rateA / rateB,
                rateA / rateB >= 0.8 ? " (>= 0.8x)" : " MISSED (target >= 0.8x)",
                rateA, rateA >= 2e6 ? " (>= 2 M)" : " MISSED (target >= 2 M msg/s)"));
        System.out.println("SUMMARY HardwareRegime: actors/bare, " + provider + ": " + String.join("; ", summary));
    }

    private static String pName(double p) {
        return p == 0.5 ? "50" : p == 0.99 ? "99" : "99.9";
    }

    /** Round-trip percentiles of each round, in microseconds. */
    static final class Series {
        private final List<long[]> rounds = new ArrayList<>();

        void add(long[] roundTrips) {
            Arrays.sort(roundTrips);
            rounds.add(roundTrips);
        }

        private double[] at(double p) {
            return rounds.stream().mapToDouble(r -> r[Math.min(r.length - 1, (int) Math.ceil(p * r.length) - 1)] / 1e3)
                    .toArray();
        }

        double last(double p) {
            double[] all = at(p);
            return all[all.length - 1];
        }

        double median(double p) {
            return BenchSupport.median(at(p));
        }

        double min(double p) {
            return BenchSupport.least(at(p));
        }

        double max(double p) {
            return BenchSupport.best(at(p));
        }
    }

    // ------------------------------------------------------------------ the bare SPI

    /** One end of a bare connection: a CQ polled by its own thread, a QP, send and receive memory. */
    static final class End {
        final CmId id;
        final ProtectionDomain pd;
        final CompletionQueue cq;
        final QueuePair qp;
        final MemoryRegion send;
        final MemoryRegion recv;
        final int size;
        final WorkCompletion[] batch = new WorkCompletion[32];

        End(CmId id, int size) {
            this.id = id;
            this.size = size;
            pd = id.device().allocateProtectionDomain();
            cq = id.device().createCompletionQueue(2 * DEPTH, null);
            qp = id.createQueuePair(pd, QpInitAttributes.rc(cq, DEPTH, DEPTH));
            send = pd.register(ByteBuffer.allocateDirect(size));
            recv = pd.register(ByteBuffer.allocateDirect(DEPTH * size));
            ReceiveWorkRequest[] all = new ReceiveWorkRequest[DEPTH];
            for (int slot = 0; slot < DEPTH; slot++) {
                all[slot] = receive(slot);
            }
            qp.postReceive(all);
        }

        ReceiveWorkRequest receive(int slot) {
            return ReceiveWorkRequest.of(slot, recv.sge(slot * size, size));
        }

        /** Busy-polls until a receive completes, reposts it; send completions in between are counted out. */
        int awaitReceive() {
            while (true) {
                int n = cq.poll(batch);
                int received = 0;
                for (int i = 0; i < n; i++) {
                    WorkCompletion wc = batch[i];
                    if (!wc.isSuccess()) {
                        throw new IllegalStateException("work request failed: " + wc);
                    }
                    if (wc.opcode() == WcOpcode.RECV) {
                        qp.postReceive(receive((int) wc.wrId()));
                        received++;
                    }
                }
                if (received > 0) {
                    return received;
                }
            }
        }

        void postSend(long wrId) {
            qp.postSend(SendWorkRequest.send(wrId, send.sge(0, size)));
        }

        /** A Send of the first {@code length} bytes carrying {@code immediate}. */
        void postSend(int length, int immediate) {
            qp.postSend(SendWorkRequest.sendWithImmediate(0, immediate, send.sge(0, length)));
        }

        void close() {
            id.destroyQueuePair();
            send.close();
            recv.close();
            cq.close();
            pd.close();
            id.close();
        }
    }

    /** Two ends connected through the CM; each benchmark part runs one busy-polling thread per end. */
    private static final class BarePair implements AutoCloseable {
        private final Fabric fabric;
        private final EventChannel events;
        private final CmId listener;
        private final End client;
        private final End server;
        /** What the last ping-pong's echo thread allocated; it ends before anybody else can read it. */
        private volatile long echoAllocated;

        BarePair(String provider, Map<String, String> options, String address, int size) throws Exception {
            fabric = Fabric.open(provider, options);
            events = fabric.createEventChannel();
            listener = fabric.createCmId(events, PortSpace.TCP);
            listener.bind(new InetSocketAddress(address, 0));
            listener.listen(1);
            List<End> ends = BenchSupport.connectEnds(fabric, events, listener, id -> new End(id, size), STEP);
            client = ends.get(0);
            server = ends.get(1);
        }

        /** Each round trip's time in nanoseconds. */
        long[] pingPong(int count) throws Exception {
            long[] rtt = new long[count];
            Thread echo = new Thread(() -> {
                for (int i = 0; i < count; i++) {
                    server.awaitReceive();
                    server.postSend(0);
                }
                echoAllocated = BenchSupport.allocatedByThisThread();
            }, "bench-echo");
            echo.start();
            for (int i = 0; i < count; i++) {
                long start = System.nanoTime();
                client.postSend(0);
                client.awaitReceive();
                rtt[i] = System.nanoTime() - start;
            }
            echo.join();
            drainSends(client);
            drainSends(server);
            return rtt;
        }

        /** Messages per second, from the first post until the receiver took the last. */
        double stream(int count) throws Exception {
            CompletableFuture<Long> done = new CompletableFuture<>();
            Thread sink = new Thread(() -> {
                int received = 0;
                while (received < count) {
                    received += server.awaitReceive();
                }
                done.complete(System.nanoTime());
            }, "bench-sink");
            sink.start();
            long start = System.nanoTime();
            int outstanding = 0;
            for (int i = 0; i < count; i++) {
                while (outstanding >= WINDOW) {
                    outstanding -= client.cq.poll(client.batch);
                }
                client.postSend(i);
                outstanding++;
            }
            long end = done.get(60, TimeUnit.SECONDS);
            while (outstanding > 0) {
                outstanding -= client.cq.poll(client.batch);
            }
            sink.join();
            return count / ((end - start) / 1e9);
        }

        /** Takes the send completions a ping-pong leaves behind. */
        private static void drainSends(End end) {
            while (end.cq.poll(end.batch) > 0) {
                // only sends are left
            }
        }

        @Override
        public void close() {
            client.close();
            server.close();
            listener.close();
            events.close();
            if (fabric.ledger().total() != 0) {
                throw new IllegalStateException("leaked: " + fabric.ledger());
            }
            fabric.close();
        }
    }

    // ------------------------------------------------------------------ the actors

    /** What the client handler is asked to do next, from the benchmark's thread. */
    sealed interface Task {
    }

    record PingPong(int size, long[] rtt, CompletableFuture<long[]> done) implements Task {
    }

    record Stream(int count, CompletableFuture<Long> done) implements Task {
    }

    /** One connection through the actor API, kept for every round: an echo and a sink behind one handler. */
    static final class ActorPair implements AutoCloseable {
        /** Each end's registered memory: the largest message a ping-pong sends. */
        private static final int REGISTERED = 4096;
        /** Messages from this size on are received in place; smaller ones cost less to copy than to release. */
        private static final int IN_PLACE_FROM = 256;
        static final RdmaProtocol.ConnectionOptions OPTIONS = RdmaProtocol.ConnectionOptions.none()
                .withReceiveInPlace(IN_PLACE_FROM).withReceivedBatches();
        private final ActorSystem<Object> system;

        /**
         * Both ends send their ping-pong messages from registered memory, as the bare loop posts
         * from its own, and receive 4 KiB in place: neither copies those bytes.
         */
        ActorPair(Config config, String address) throws Exception {
            CompletableFuture<Void> connected = new CompletableFuture<>();
            system = ActorSystem.create(Behaviors.setup(ctx -> {
                // handlers on the data path's dispatcher, as docs/tuning.md advises for latency
                DispatcherSelector dispatcher = HANDLERS_ON_DEFAULT ? DispatcherSelector.defaultDispatcher()
                        : Rdma.get(ctx.getSystem()).dispatcher();
                ActorRef<Object> answering = ctx.spawn(answerAndSink(), "server", dispatcher);
                ActorRef<Object> asking = ctx.spawn(client(connected), "client", dispatcher);
                ctx.spawn(BenchSupport.selfConnecting(new InetSocketAddress(address, 0), answering.narrow(),
                        listenCtx -> asking.unsafeUpcast(), STEP,
                        OPTIONS), "listener");
                return Behaviors.receiveMessage(task -> {
                    asking.tell(task);
                    return Behaviors.same();
                });
            }), "hardware-regime", config);
            connected.get(30, TimeUnit.SECONDS);
        }

        long[] pingPong(int size, int count) throws Exception {
            PingPong task = new PingPong(size, new long[count], new CompletableFuture<>());
            system.tell(task);
            return task.done().get(120, TimeUnit.SECONDS);
        }

        double stream(int count) throws Exception {
            Stream task = new Stream(count, new CompletableFuture<>());
            long start = System.nanoTime();
            system.tell(task);
            return count / ((task.done().get(120, TimeUnit.SECONDS) - start) / 1e9);
        }

        @Override
        public void close() {
            system.terminate();
            system.getWhenTerminated().toCompletableFuture().join();
        }

        /** Asks the connection for {@link #REGISTERED} bytes of registered memory, answered to {@code self}. */
        private static void register(ActorRef<RdmaProtocol.ConnectionCommand> connection, ActorRef<Object> self) {
            connection.tell(new RdmaProtocol.RegisterMemory(ByteBuffer.allocateDirect(REGISTERED), self.narrow()));
        }

        /**
         * The server's handler: answers a message without an immediate with one of the same size
         * from its registered memory, and the last message of a stream (immediate 1; the others
         * carry 2) with an empty Send, once all before it came. It releases each message it gets;
         * what comes before its memory is registered waits for it.
         */
        static Behavior<Object> answerAndSink() {
            return Behaviors.setup(ctx -> new Object() {
                ActorRef<RdmaProtocol.ConnectionCommand> connection;
                LocalRegion memory;
                final List<RdmaProtocol.Received> early = new ArrayList<>();

                Behavior<Object> behavior() {
                    return Behaviors.receive(Object.class)
                            .onMessage(RdmaProtocol.Connected.class, c -> {
                                connection = c.connection();
                                register(connection, ctx.getSelf());
                                return Behaviors.same();
                            })
                            .onMessage(RdmaProtocol.MemoryRegistered.class, m -> {
                                memory = m.region();
                                early.forEach(this::answer);
                                early.clear();
                                return Behaviors.same();
                            })
                            .onMessage(RdmaProtocol.ReceivedBatch.class, b -> {
                                b.messages().forEach(this::onReceived);
                                return Behaviors.same();
                            })
                            .onMessage(RdmaProtocol.CommandFailed.class, f -> {
                                throw new IllegalStateException("a command failed: " + f);
                            })
                            .onMessage(Object.class, e -> Behaviors.same())
                            .build();
                }

                void onReceived(RdmaProtocol.Received r) {
                    if (memory == null) {
                        early.add(r);
                    } else {
                        answer(r);
                    }
                }

                void answer(RdmaProtocol.Received r) {
                    if (r.immediate() == null) {
                        connection.tell(RdmaProtocol.Send.of(memory.slice(0, r.size())).releasing(r));
                    } else if (r.immediate() == 1) {
                        connection.tell(RdmaProtocol.Send.of(ByteString.emptyByteString(), null).releasing(r));
                    } else if (r.releasable()) {
                        connection.tell(new RdmaProtocol.Release(r));
                    }
                }
            }.behavior());
        }

        /** The client's handler: runs the tasks it is given over its connection. */
        static Behavior<Object> client(CompletableFuture<Void> ready) {
            return Behaviors.setup(ctx -> new Object() {
                ActorRef<RdmaProtocol.ConnectionCommand> connection;
                LocalRegion memory;
                PingPong pingPong;
                LocalRegion.Slice message;
                int done;
                long start;
                Stream stream;
                ByteString streamed = ByteString.fromArray(new byte[64]);
                int sent;
                int acked;

                Behavior<Object> behavior() {
                    return Behaviors.receive(Object.class)
                            .onMessage(RdmaProtocol.Connected.class, c -> {
                                connection = c.connection();
                                register(connection, ctx.getSelf());
                                return Behaviors.same();
                            })
                            .onMessage(RdmaProtocol.MemoryRegistered.class, m -> {
                                memory = m.region();
                                ready.complete(null);
                                return Behaviors.same();
                            })
                            .onMessage(PingPong.class, p -> {
                                pingPong = p;
                                done = 0;
                                message = memory.slice(0, p.size());
                                start = System.nanoTime();
                                connection.tell(RdmaProtocol.Send.of(message));
                                return Behaviors.same();
                            })
                            .onMessage(Stream.class, s -> {
                                stream = s;
                                sent = 0;
                                acked = 0;
                                sendWindow();
                                return Behaviors.same();
                            })
                            .onMessage(RdmaProtocol.ReceivedBatch.class, b -> {
                                b.messages().forEach(this::onReceived);
                                return Behaviors.same();
                            })
                            .onMessage(RdmaProtocol.Acked.class, a -> {
                                acked += ACK_EVERY;
                                sendWindow();
                                return Behaviors.same();
                            })
                            .onMessage(RdmaProtocol.CommandFailed.class, f -> {
                                throw new IllegalStateException("a command failed: " + f);
                            })
                            .onMessage(Object.class, e -> Behaviors.same())
                            .build();
                }

                void onReceived(RdmaProtocol.Received r) {
                    if (stream != null) {
                        stream.done().complete(System.nanoTime());
                        stream = null;
                        return;
                    }
                    long now = System.nanoTime();
                    pingPong.rtt()[done++] = now - start;
                    if (done == pingPong.rtt().length) {
                        pingPong.done().complete(pingPong.rtt());
                        if (r.releasable()) {
                            connection.tell(new RdmaProtocol.Release(r));
                        }
                    } else {
                        start = System.nanoTime();
                        // the answer's receive buffer goes back with the next request
                        connection.tell(RdmaProtocol.Send.of(message).releasing(r));
                    }
                }

                /**
                 * Keeps WINDOW Sends unacknowledged, told as one Batch; an Acked every ACK_EVERY; the
                 * last one says so.
                 */
                void sendWindow() {
                    List<RdmaProtocol.DataCommand> sends = new ArrayList<>();
                    while (sent < stream.count() && sent - acked < WINDOW) {
                        sent++;
                        sends.add(sent == stream.count()
                                ? RdmaProtocol.Send.of(streamed, null).withImmediate(1)
                                : RdmaProtocol.Send.of(streamed, sent % ACK_EVERY == 0 ? sent : null).withImmediate(2));
                    }
                    if (!sends.isEmpty()) {
                        connection.tell(new RdmaProtocol.Batch(sends));
                    }
                }
            }.behavior());
        }
    }
}
