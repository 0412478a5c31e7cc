package io.rdmaactors.bench;

import io.rdmaactors.actors.Rdma;
import io.rdmaactors.actors.RdmaProtocol;
import io.rdmaactors.actors.RdmaSettings;
import com.typesafe.config.ConfigFactory;
import io.rdmaactors.cm.CmEvent;
import io.rdmaactors.verbs.CmId;
import io.rdmaactors.verbs.ConnectionParameters;
import io.rdmaactors.verbs.EventChannel;
import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.PortSpace;
import io.rdmaactors.verbs.WcOpcode;
import io.rdmaactors.verbs.WorkCompletion;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/**
 * Two JVMs on one host, 64 B and 4 KiB ping-pong (p50, p99, p99.9 of each round trip) and a 64 B
 * one-way stream, over eight kinds in the same run, rounds interleaved:
 * <ul>
 *   <li>the plain TCP floor: two NIO {@code SocketChannel}s, each end busy-polling its socket;</li>
 *   <li>the shared-memory floor: a ring per direction in a memory-mapped file, each end spinning on it;</li>
 *   <li>the bare SPI over the soft fabric's link between the processes, each end busy-polling its CQ;</li>
 *   <li>the actor API over that link, with library defaults (handlers on Pekko's default dispatcher);</li>
 *   <li>the same in latency mode as docs/tuning.md sets it up on this machine ({@code rdma-actors.wait =
 *       spin} and Pekko's default dispatcher sized to each process's half of the cores);</li>
 * </ul>
 * the last three once over a link through TCP ({@code transport = tcp} on the client's side) and
 * once through shared memory (the default between two processes of one host).
 * The child ({@code --serve}) echoes, or for a stream answers the last message once all came. Its
 * servers spin only while their peer is busy: after {@link #IDLE_AFTER_NANOS} with nothing they
 * sleep between polls, so the kinds not being measured leave the cores alone.
 * {@code SUMMARY CrossProcessLatency:} gives each target of the cross-process issue and MISSED beside
 * each one missed.
 *
 * <p>{@code java -cp "bench/target/classes:$(cat bench/target/classpath.txt)" io.rdmaactors.bench.CrossProcessLatency}
 */
public final class CrossProcessLatency {

    private static final String USAGE = "CrossProcessLatency [--rounds=5] [--round-trips=20000] [--warm-up=20000]"
            + " [--streamed=200000] [--only=TEXT: only the kinds whose name contains it, no SUMMARY]";
    private static final Duration STEP = Duration.ofSeconds(10);
    /**
     * docs/tuning.md's line for machines of fewer than 8 cores, sized to each process's share of
     * the cores: the two processes of this benchmark, one thread each on 2 cores.
     */
    private static final String SIZED_DISPATCHER = String.format(
            "pekko.actor.default-dispatcher.fork-join-executor { parallelism-min = %1$d%n parallelism-max = %1$d }",
            Math.max(1, Runtime.getRuntime().availableProcessors() / 2));
    /** Frame header: the length in the low bits, what the server does with it in the top two. */
    private static final int ECHO = 0;
    private static final int ANSWER = 1;
    private static final int SINK = 2;
    private static final int KIND_SHIFT = 28;
    private static final int LENGTH_MASK = (1 << KIND_SHIFT) - 1;
    /** Messages a stream keeps unanswered on the bare SPI (its send queue's completions). */
    private static final int WINDOW = 128;
    /** A server with nothing for this long stops spinning and sleeps between polls. */
    private static final long IDLE_AFTER_NANOS = 20_000_000;
    private static final long IDLE_SLEEP_NANOS = 200_000;
    /**
     * An idle server's sleeps double up to this: the peer's servers not being measured would
     * otherwise wake 5,000 times a second each, and every wake-up takes a core from the two
     * threads that spin for the round trip being measured.
     */
    private static final long MAX_IDLE_SLEEP_NANOS = 20_000_000;
    private static final int[] SIZES = {64, 4096};
    /** The client's {@code transport}: through TCP, then the default (shared memory on one host). */
    private static final List<String> TRANSPORTS = List.of("tcp", "auto");
    /** Where each transport's three kinds start in the list of clients, after the two floors. */
    private static final int TCP_LINK = 2;
    private static final int SHARED_LINK = 5;

    private CrossProcessLatency() {
    }

    public static void main(String[] args) {
        if (args.length == 2 && args[0].equals("--serve")) {
            BenchSupport.runOrReport("CrossProcessLatency peer", () -> serve(Path.of(args[1])));
            return;
        }
        BenchSupport.runOrReport("CrossProcessLatency", () -> run(new BenchSupport.Options(args, USAGE, "rounds",
                "round-trips", "warm-up", "streamed", "only")));
    }

    /** One transport's client end in the measuring process. */
    private interface Client extends AutoCloseable {
        String name();

        /** Each round trip's time in nanoseconds. */
        long[] pingPong(int size, int count) throws Exception;

        /** Messages per second, from the first send until the server took the last. */
        double stream(int count) throws Exception;

        @Override
        void close() throws IOException;
    }

    private static void run(BenchSupport.Options options) throws Exception {
        int rounds = options.integer("rounds", 5, 1);
        int roundTrips = options.integer("round-trips", 20_000, 100);
        int warmUp = options.integer("warm-up", 20_000, 100);
        int streamed = options.integer("streamed", 200_000, 1000);
        String only = options.string("only", "");
        Path ring = Files.createTempFile("cross-process-latency", ".ring",
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        List<String> command = new ArrayList<>(List.of(BenchSupport.javaBinary(), "-cp",
                System.getProperty("java.class.path"), "-Xmx1g"));
        command.addAll(BenchSupport.settingsForChild());
        command.addAll(List.of(CrossProcessLatency.class.getName(), "--serve", ring.toString()));
        Process child = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        System.out.printf("CrossProcessLatency: two JVMs on 127.0.0.1, %d rounds of %d round trips per size after %d,"
                        + " %d x 64 B streamed; defaults: %s; latency mode: %s%n", rounds, roundTrips, warmUp, streamed,
                BenchSupport.defaultDispatcher(ConfigFactory.load()),
                BenchSupport.defaultDispatcher(config(RdmaSettings.SPIN)));
        List<Client> clients = new ArrayList<>();
        try {
            int[] ports = ports(child);
            clients.add(new NioClient(ports[0]));
            clients.add(new MappedClient(ring));
            for (String transport : TRANSPORTS) {
                clients.add(new BareClient(ports[1], transport));
                clients.add(new ActorClient(ports[2], RdmaSettings.BALANCED, transport));
                clients.add(new ActorClient(ports[3], RdmaSettings.SPIN, transport));
            }
            int kinds = clients.size();
            HardwareRegime.Series[][] latency = new HardwareRegime.Series[kinds][SIZES.length];
            double[][] rate = new double[kinds][rounds];
            boolean[] measured = new boolean[kinds];
            for (int k = 0; k < kinds; k++) {
                measured[k] = clients.get(k).name().contains(only);
                for (int s = 0; s < SIZES.length; s++) {
                    latency[k][s] = new HardwareRegime.Series();
                    if (measured[k]) {
                        clients.get(k).pingPong(SIZES[s], warmUp);
                    }
                }
                if (measured[k]) {
                    clients.get(k).stream(streamed / 4);
                }
            }
            for (int round = 0; round < rounds; round++) {
                StringBuilder line = new StringBuilder("round " + (round + 1) + ":");
                for (int i = 0; i < kinds; i++) {
                    int k = (i + round) % kinds; // each kind goes first in turn
                    if (!measured[k]) {
                        continue;
                    }
                    Client c = clients.get(k);
                    for (int s = 0; s < SIZES.length; s++) {
                        c.pingPong(SIZES[s], roundTrips / 10); // back from the others' turn
                        latency[k][s].add(c.pingPong(SIZES[s], roundTrips));
                    }
                    rate[k][round] = c.stream(streamed);
                }
                for (int k = 0; k < kinds; k++) {
                    if (!measured[k]) {
                        continue;
                    }
                    line.append(String.format(" %s 64 B p50 %.1f us, %,.0f msg/s;", clients.get(k).name(),
                            latency[k][0].last(0.5), rate[k][round]));
                }
                System.out.println(line);
            }
            report(clients, measured, latency, rate, only.isEmpty());
        } finally {
            for (Client c : clients) {
                c.close();
            }
            child.getOutputStream().close();
            child.waitFor(30, TimeUnit.SECONDS);
            child.destroy();
            Files.deleteIfExists(ring);
        }
    }

    private static int[] ports(Process child) throws IOException {
        BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
        for (String line; (line = out.readLine()) != null; ) {
            if (line.startsWith("PORTS ")) {
                String[] p = line.substring(6).trim().split(" ");
                return new int[] {Integer.parseInt(p[0]), Integer.parseInt(p[1]), Integer.parseInt(p[2]),
                        Integer.parseInt(p[3])};
            }
        }
        throw new IllegalStateException("the peer printed no ports");
    }

    private static void report(List<Client> clients, boolean[] measured, HardwareRegime.Series[][] latency,
                               double[][] rate, boolean judged) {
        for (int k = 0; k < clients.size(); k++) {
            if (!measured[k]) {
                continue;
            }
            for (int s = 0; s < SIZES.length; s++) {
                HardwareRegime.Series series = latency[k][s];
                System.out.printf("%-32s %5s p50 %7.1f us [%.1f-%.1f], p99 %7.1f us [%.1f-%.1f], p99.9 %7.1f us%n",
                        clients.get(k).name(), SIZES[s] == 64 ? "64 B" : "4 KiB", series.median(0.5),
                        series.min(0.5), series.max(0.5), series.median(0.99), series.min(0.99), series.max(0.99),
                        series.median(0.999));
            }
            System.out.printf("%-32s stream 64 B %,.0f msg/s [%,.0f-%,.0f]%n", clients.get(k).name(),
                    BenchSupport.median(rate[k]), BenchSupport.least(rate[k]), BenchSupport.best(rate[k]));
        }
        if (!judged) {
            return;
        }
        HardwareRegime.Series nio = latency[0][0];
        HardwareRegime.Series spin = latency[TCP_LINK + 2][0];
        HardwareRegime.Series bareShared = latency[SHARED_LINK][0];
        HardwareRegime.Series spinShared = latency[SHARED_LINK + 2][0];
        List<String> summary = new ArrayList<>();
        summary.add(target("actor API in latency mode over TCP/TCP floor 64 B p50", spin.median(0.5) / nio.median(0.5),
                1.3, "x"));
        summary.add(target("p99", spin.median(0.99) / nio.median(0.99), 2.0, "x"));
        summary.add(target("bare SPI over shared memory 64 B p50", bareShared.median(0.5), 2, " us"));
        summary.add(target("p99", bareShared.median(0.99), 5, " us"));
        summary.add(target("actor API in latency mode over shared memory 64 B p50", spinShared.median(0.5), 3, " us"));
        summary.add(target("p99", spinShared.median(0.99), 8, " us"));
        summary.add(String.format("actor API in latency mode over shared memory 64 B stream %,.0f msg/s%s",
                BenchSupport.median(rate[SHARED_LINK + 2]), BenchSupport.median(rate[SHARED_LINK + 2]) >= 2e6
                        ? " (>= 2 M)" : " MISSED (target >= 2 M msg/s)"));
        summary.add(target("actor API defaults over TCP 64 B p50", latency[TCP_LINK + 1][0].median(0.5), 40, " us"));
        summary.add(target("actor API defaults over shared memory 64 B p50",
                latency[SHARED_LINK + 1][0].median(0.5), 40, " us"));
        summary.add(String.format("bare SPI over TCP/TCP floor 64 B p50 %.2fx",
                latency[TCP_LINK][0].median(0.5) / nio.median(0.5)));
        summary.add(String.format("shared-memory floor 64 B p50 %.2f us, stream %,.0f msg/s", latency[1][0].median(0.5),
                BenchSupport.median(rate[1])));
        System.out.println("SUMMARY CrossProcessLatency: " + String.join("; ", summary));
    }

    private static String over(String transport) {
        return transport.equals("tcp") ? "TCP" : "shared memory";
    }

    private static String target(String what, double value, double most, String unit) {
        return String.format("%s %.2f%s%s", what, value, unit, value <= most ? " (<= " + most + unit + ")"
                : " MISSED (target <= " + most + unit + ")");
    }

    private static int header(int kind, int length) {
        return kind << KIND_SHIFT | length;
    }

    // ------------------------------------------------------------------ the server process

    private static void serve(Path ring) throws Exception {
        ServerSocketChannel nio = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        daemon("nio-accept", () -> {
            while (true) {
                SocketChannel s = nio.accept();
                daemon("nio-echo", () -> nioEcho(s));
            }
        });
        daemon("mapped-echo", () -> mappedEcho(ring));
        Fabric fabric = Fabric.open("soft", java.util.Map.of());
        EventChannel events = fabric.createEventChannel();
        CmId listener = fabric.createCmId(events, PortSpace.TCP);
        listener.bind(new InetSocketAddress("127.0.0.1", 0));
        listener.listen(8);
        daemon("bare-accept", () -> {
            while (true) {
                CmEvent e = events.await(Duration.ofDays(1));
                if (e instanceof CmEvent.ConnectRequest r) {
                    CmId id = events.cmId(r.id());
                    HardwareRegime.End end = new HardwareRegime.End(id, 4096);
                    id.accept(ConnectionParameters.of(null));
                    daemon("bare-echo", () -> bareEcho(end));
                }
            }
        });
        CompletableFuture<Integer> balanced = new CompletableFuture<>();
        CompletableFuture<Integer> spinning = new CompletableFuture<>();
        ActorSystem<Void> system = echo(RdmaSettings.BALANCED, balanced);
        ActorSystem<Void> latencyMode = echo(RdmaSettings.SPIN, spinning);
        System.out.printf("PORTS %d %d %d %d%n", ((InetSocketAddress) nio.getLocalAddress()).getPort(),
                listener.localAddress().getPort(), balanced.get(30, TimeUnit.SECONDS),
                spinning.get(30, TimeUnit.SECONDS));
        System.out.flush();
        while (System.in.read() >= 0) {
            // runs until the parent closes our standard input
        }
        system.terminate();
        latencyMode.terminate();
        System.exit(0);
    }

    /**
     * The actor API's server, answering each ping from registered memory, with {@code rdma-actors.wait = wait};
     * completes {@code port} once listening.
     */
    private static ActorSystem<Void> echo(String wait, CompletableFuture<Integer> port) {
        return ActorSystem.create(Behaviors.setup(ctx -> {
            ctx.spawn(Behaviors.<RdmaProtocol.ListenerEvent>setup(l -> {
                Rdma.get(l.getSystem()).manager().tell(RdmaProtocol.Listen.on(new InetSocketAddress("127.0.0.1", 0),
                        l.getSelf()).withOptions(HardwareRegime.ActorPair.OPTIONS));
                return Behaviors.receive(RdmaProtocol.ListenerEvent.class)
                        .onMessage(RdmaProtocol.Listening.class, b -> {
                            port.complete(b.localAddress().getPort());
                            return Behaviors.same();
                        })
                        .onMessage(RdmaProtocol.ConnectionRequested.class, r -> {
                            // a handler each: one client over TCP, one over shared memory
                            r.connection().tell(RdmaProtocol.Accept.with(l.spawnAnonymous(
                                    HardwareRegime.ActorPair.answerAndSink(), EchoSinkPeer.handlerProps(l.getSystem()))
                                    .unsafeUpcast()));
                            return Behaviors.same();
                        })
                        .onMessage(RdmaProtocol.ListenerEvent.class, e -> Behaviors.same())
                        .build();
            }), "listener");
            return Behaviors.empty();
        }), "peer-" + wait, config(wait));
    }

    /**
     * Library defaults but {@code wait}. Latency mode as docs/tuning.md sets it up on a machine of
     * fewer than 8 cores: {@code wait = spin}, and Pekko's default dispatcher sized to the cores
     * this process has (half, beside the other), whose idle threads would otherwise wake for every
     * hand-off and take the cores the spinning ends need.
     */
    private static com.typesafe.config.Config config(String wait) {
        String latencyMode = wait.equals(RdmaSettings.SPIN) ? "\n" + SIZED_DISPATCHER : "";
        return ConfigFactory.parseString("pekko.loglevel = WARNING\nrdma-actors.wait = " + wait + latencyMode)
                .withFallback(ConfigFactory.load());
    }

    private interface Body {
        void run() throws Exception;
    }

    private static void daemon(String name, Body body) {
        Thread t = new Thread(() -> {
            try {
                body.run();
            } catch (Exception e) {
                if (!(e instanceof IOException)) { // a client that went away ends its echo
                    e.printStackTrace();
                }
            }
        }, name);
        t.setDaemon(true);
        t.start();
    }

    /** Spins while busy; after {@link #IDLE_AFTER_NANOS} with nothing, sleeps between polls. */
    private static final class Idle {
        private long lastBusy = System.nanoTime();
        private long sleep = IDLE_SLEEP_NANOS;

        void busy() {
            lastBusy = System.nanoTime();
            sleep = IDLE_SLEEP_NANOS;
        }

        void nothing() {
            if (System.nanoTime() - lastBusy > IDLE_AFTER_NANOS) {
                LockSupport.parkNanos(sleep);
                sleep = Math.min(2 * sleep, MAX_IDLE_SLEEP_NANOS);
            } else {
                Thread.onSpinWait();
            }
        }
    }

    private static void nioEcho(SocketChannel socket) throws IOException {
        socket.configureBlocking(false);
        socket.setOption(java.net.StandardSocketOptions.TCP_NODELAY, true);
        ByteBuffer in = ByteBuffer.allocateDirect(1 << 20);
        ByteBuffer out = ByteBuffer.allocateDirect(8192);
        Idle idle = new Idle();
        while (true) {
            int n = socket.read(in);
            if (n < 0) {
                socket.close();
                return;
            }
            if (n == 0) {
                idle.nothing();
                continue;
            }
            idle.busy();
            in.flip();
            while (in.remaining() >= 4) {
                int header = in.getInt(in.position());
                int length = header & LENGTH_MASK;
                if (in.remaining() < 4 + length) {
                    break;
                }
                int kind = header >>> KIND_SHIFT;
                out.clear();
                if (kind == ECHO) {
                    out.putInt(header);
                    out.put(in.slice(in.position() + 4, length));
                } else if (kind == ANSWER) {
                    out.putInt(header(ECHO, 0));
                }
                in.position(in.position() + 4 + length);
                out.flip();
                while (out.hasRemaining()) {
                    socket.write(out);
                }
            }
            in.compact();
        }
    }

    private static void mappedEcho(Path ring) throws IOException {
        Ring toServer = new Ring(ring, 0);
        Ring toClient = new Ring(ring, 1);
        Idle idle = new Idle();
        ByteBuffer message = ByteBuffer.allocate(Ring.MESSAGE);
        while (true) {
            int header = toServer.take(message);
            if (header < 0) {
                idle.nothing();
                continue;
            }
            idle.busy();
            int kind = header >>> KIND_SHIFT;
            if (kind == ECHO) {
                toClient.put(header, message);
            } else if (kind == ANSWER) {
                toClient.put(header(ECHO, 0), message.clear().limit(0));
            }
        }
    }

    private static void bareEcho(HardwareRegime.End end) {
        Idle idle = new Idle();
        while (true) {
            int n = end.cq.poll(end.batch);
            if (n == 0) {
                idle.nothing();
                continue;
            }
            idle.busy();
            for (int i = 0; i < n; i++) {
                WorkCompletion wc = end.batch[i];
                if (!wc.isSuccess()) {
                    return; // the client disconnected: the QP flushed
                }
                if (wc.opcode() == WcOpcode.RECV) {
                    end.qp.postReceive(end.receive((int) wc.wrId()));
                    int kind = wc.hasImmediate() ? wc.immData() : ECHO;
                    if (kind == ECHO) {
                        end.postSend(wc.byteLen(), ECHO);
                    } else if (kind == ANSWER) {
                        end.postSend(0, ECHO);
                    }
                }
            }
        }
    }

    // ------------------------------------------------------------------ the clients

    /** Two busy-polling NIO sockets: the plain TCP floor. A message is one write of its frame. */
    private static final class NioClient implements Client {
        private final SocketChannel socket;
        private final ByteBuffer out = ByteBuffer.allocateDirect(8192);
        private final ByteBuffer in = ByteBuffer.allocateDirect(8192);

        NioClient(int port) throws IOException {
            socket = SocketChannel.open(new InetSocketAddress("127.0.0.1", port));
            socket.setOption(java.net.StandardSocketOptions.TCP_NODELAY, true);
            socket.configureBlocking(false);
        }

        @Override
        public String name() {
            return "TCP floor (NIO)";
        }

        private void write(int kind, int length) throws IOException {
            out.clear().putInt(header(kind, length)).position(4 + length).flip();
            while (out.hasRemaining()) {
                socket.write(out);
            }
        }

        private void awaitFrame(int length) throws IOException {
            in.clear().limit(4 + length);
            while (in.hasRemaining()) {
                if (socket.read(in) < 0) {
                    throw new IOException("the peer closed");
                }
            }
        }

        @Override
        public long[] pingPong(int size, int count) throws IOException {
            long[] rtt = new long[count];
            for (int i = 0; i < count; i++) {
                long start = System.nanoTime();
                write(ECHO, size);
                awaitFrame(size);
                rtt[i] = System.nanoTime() - start;
            }
            return rtt;
        }

        @Override
        public double stream(int count) throws IOException {
            long start = System.nanoTime();
            for (int i = 1; i < count; i++) {
                write(SINK, 64);
            }
            write(ANSWER, 64);
            awaitFrame(0);
            return count / ((System.nanoTime() - start) / 1e9);
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    /**
     * A single-producer single-consumer ring of one direction in the mapped file: a consumed count,
     * then {@link #SLOTS} slots of a sequence number, a frame header and up to {@link #MESSAGE}
     * bytes. A slot is published by its sequence number, written last with release semantics.
     */
    private static final class Ring {
        static final int SLOTS = 256;
        static final int MESSAGE = 4096;
        private static final int SLOT = 64 + MESSAGE;
        private static final int SIZE = 64 + SLOTS * SLOT;
        private static final VarHandle LONGS = MethodHandles.byteBufferViewVarHandle(long[].class,
                ByteOrder.nativeOrder());
        private final MappedByteBuffer map;
        private long next;

        Ring(Path file, int direction) throws IOException {
            try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                map = channel.map(FileChannel.MapMode.READ_WRITE, (long) direction * SIZE, SIZE);
            }
            map.order(ByteOrder.nativeOrder());
        }

        /** Waits for room, then publishes the frame. */
        void put(int header, ByteBuffer payload) {
            while (next - (long) LONGS.getAcquire(map, 0) >= SLOTS) {
                Thread.onSpinWait();
            }
            int slot = 64 + (int) (next % SLOTS) * SLOT;
            map.putInt(slot + 8, header);
            map.put(slot + 16, payload, payload.position(), payload.remaining());
            LONGS.setRelease(map, slot, next + 1);
            next++;
        }

        /** The next frame's header with its bytes in {@code into}, or -1 if none was published. */
        int take(ByteBuffer into) {
            int slot = 64 + (int) (next % SLOTS) * SLOT;
            if ((long) LONGS.getAcquire(map, slot) != next + 1) {
                return -1;
            }
            int header = map.getInt(slot + 8);
            int length = header & LENGTH_MASK;
            into.clear().limit(length);
            map.get(slot + 16, into.array(), 0, length);
            next++;
            LONGS.setRelease(map, 0, next);
            return header;
        }
    }

    /** Two threads spinning on a mapped file: the shared-memory floor. */
    private static final class MappedClient implements Client {
        private final Ring toServer;
        private final Ring toClient;
        private final ByteBuffer message = ByteBuffer.allocate(Ring.MESSAGE);

        MappedClient(Path file) throws IOException {
            toServer = new Ring(file, 0);
            toClient = new Ring(file, 1);
        }

        @Override
        public String name() {
            return "shared-memory floor";
        }

        private void awaitFrame() {
            while (toClient.take(message) < 0) {
                Thread.onSpinWait();
            }
        }

        @Override
        public long[] pingPong(int size, int count) {
            long[] rtt = new long[count];
            for (int i = 0; i < count; i++) {
                long start = System.nanoTime();
                toServer.put(header(ECHO, size), message.clear().limit(size));
                awaitFrame();
                rtt[i] = System.nanoTime() - start;
            }
            return rtt;
        }

        @Override
        public double stream(int count) {
            long start = System.nanoTime();
            for (int i = 1; i < count; i++) {
                toServer.put(header(SINK, 64), message.clear().limit(64));
            }
            toServer.put(header(ANSWER, 64), message.clear().limit(64));
            awaitFrame();
            return count / ((System.nanoTime() - start) / 1e9);
        }

        @Override
        public void close() {
            // the mapping goes with the process; the parent deletes the file
        }
    }

    /** The bare SPI over the soft fabric's link, one busy-polling thread. */
    private static final class BareClient implements Client {
        private final Fabric fabric;
        private final EventChannel events;
        private final HardwareRegime.End end;

        private final String transport;

        BareClient(int port, String transport) throws Exception {
            this.transport = transport;
            fabric = Fabric.open("soft", java.util.Map.of("transport", transport));
            events = fabric.createEventChannel();
            CmId id = fabric.createCmId(events, PortSpace.TCP);
            id.resolveAddress(null, new InetSocketAddress("127.0.0.1", port), STEP);
            BenchSupport.expect(events, CmEvent.AddrResolved.class, STEP);
            id.resolveRoute(STEP);
            BenchSupport.expect(events, CmEvent.RouteResolved.class, STEP);
            end = new HardwareRegime.End(id, 4096);
            id.connect(ConnectionParameters.of(null));
            BenchSupport.expect(events, CmEvent.Established.class, STEP);
        }

        @Override
        public String name() {
            return "bare SPI over " + over(transport);
        }

        @Override
        public long[] pingPong(int size, int count) {
            long[] rtt = new long[count];
            for (int i = 0; i < count; i++) {
                long start = System.nanoTime();
                end.postSend(size, ECHO);
                end.awaitReceive();
                rtt[i] = System.nanoTime() - start;
            }
            drainSends();
            return rtt;
        }

        @Override
        public double stream(int count) {
            long start = System.nanoTime();
            int outstanding = 0;
            int received = 0;
            for (int i = 1; i <= count; i++) {
                while (outstanding >= WINDOW) {
                    int n = end.cq.poll(end.batch);
                    for (int c = 0; c < n; c++) {
                        if (end.batch[c].opcode() == WcOpcode.RECV) {
                            end.qp.postReceive(end.receive((int) end.batch[c].wrId()));
                            received++;
                        } else {
                            outstanding--;
                        }
                    }
                }
                end.postSend(64, i == count ? ANSWER : SINK);
                outstanding++;
            }
            if (received == 0) {
                end.awaitReceive();
            }
            double rate = count / ((System.nanoTime() - start) / 1e9);
            drainSends();
            return rate;
        }

        /** Waits until every send posted so far has completed. */
        private void drainSends() {
            long deadline = System.nanoTime() + STEP.toNanos();
            while (System.nanoTime() < deadline) {
                if (end.cq.poll(end.batch) == 0) {
                    LockSupport.parkNanos(100_000);
                    if (end.cq.poll(end.batch) == 0) {
                        return;
                    }
                }
            }
        }

        @Override
        public void close() {
            end.id.disconnect();
            end.close();
            events.close();
            fabric.close();
        }
    }

    /** The actor API over the link: the client handler of {@link HardwareRegime}, library defaults but {@code wait}. */
    private static final class ActorClient implements Client {
        private final ActorSystem<Object> system;
        private final String wait;
        private final String transport;

        ActorClient(int port, String wait, String transport) throws Exception {
            this.wait = wait;
            this.transport = transport;
            CompletableFuture<Void> connected = new CompletableFuture<>();
            system = ActorSystem.create(Behaviors.setup(ctx -> {
                ActorRef<Object> client = ctx.spawn(HardwareRegime.ActorPair.client(connected), "client",
                        EchoSinkPeer.handlerProps(ctx.getSystem()));
                Rdma.get(ctx.getSystem()).manager().tell(RdmaProtocol.Connect.to(
                        new InetSocketAddress("127.0.0.1", port), client.unsafeUpcast()).withTimeout(STEP)
                        .withOptions(HardwareRegime.ActorPair.OPTIONS));
                return Behaviors.receiveMessage(task -> {
                    client.tell(task);
                    return Behaviors.same();
                });
            }), "cross-process-latency", ConfigFactory.parseString("rdma-actors.fabric-options.transport = "
                    + transport).withFallback(config(wait)));
            connected.get(30, TimeUnit.SECONDS);
        }

        @Override
        public String name() {
            return (wait.equals(RdmaSettings.SPIN) ? "actor API, latency mode, " : "actor API over ") + over(transport);
        }

        @Override
        public long[] pingPong(int size, int count) throws Exception {
            HardwareRegime.PingPong task = new HardwareRegime.PingPong(size, new long[count], new CompletableFuture<>());
            system.tell(task);
            return task.done().get(120, TimeUnit.SECONDS);
        }

        @Override
        public double stream(int count) throws Exception {
            HardwareRegime.Stream task = new HardwareRegime.Stream(count, new CompletableFuture<>());
            long start = System.nanoTime();
            system.tell(task);
            return count / ((task.done().get(120, TimeUnit.SECONDS) - start) / 1e9);
        }

        @Override
        public void close() {
            system.terminate();
            system.getWhenTerminated().toCompletableFuture().join();
        }
    }
}
