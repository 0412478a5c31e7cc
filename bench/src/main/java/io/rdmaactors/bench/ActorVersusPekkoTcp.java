package io.rdmaactors.bench;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.rdmaactors.actors.Rdma;
import io.rdmaactors.actors.RdmaProtocol;
import io.rdmaactors.actors.streams.RdmaStreams;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.HdrHistogram.Histogram;
import org.apache.pekko.actor.AbstractActor;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.Props;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.io.Tcp;
import org.apache.pekko.io.TcpMessage;
import org.apache.pekko.japi.pf.ReceiveBuilder;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.javadsl.Framing;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;

/**
 * rdma-actors on the soft fabric against what a Pekko user would pick instead, Pekko TCP, between
 * two JVMs on 127.0.0.1: this process is the client of both, the child ({@link EchoSinkPeer})
 * serves both. The typed API against Pekko IO ({@code Tcp}): ping-pong of 64 B, 4 KiB and 16 MiB
 * (every round trip in an HdrHistogram, p50 and p99; 16 MiB Sends go by rendezvous; TCP's 16 MiB
 * messages go to an echo that returns each whole, as an RDMA Send is delivered whole, where the
 * smaller ones come in one read anyway), 64 B ping-pongs on many connections at once (round trips
 * per second, from the first Send to the last answer), and one-way streaming of 64 B (msg/s) and 64 KiB
 * (MB/s); streams use each transport's own flow control: rdma-actors keeps a send queue's worth of
 * Sends outstanding (4 MiB at most), every 16th 64 B one (every 64 KiB one) asking for an Acked,
 * each refill of the window told as one Batch; Pekko IO TCP pipelines a write per 64 B message
 * without waiting for acks, and on a refusal resumes with ResumeWriting (its NACK-based flow
 * control), and writes 64 KiB messages ACK-based, the next on the ack of the one before.
 * The Streams API against Pekko Streams' {@code Tcp}: an echo of 64 B and 64 KiB
 * elements through {@code outgoingConnection}, MB/s echoed; TCP carries bytes, so its client and
 * echo frame the elements with Pekko's simple framing protocol, as RdmaStreams does on the wire, and
 * both deliver the same elements. A 64 B ping-pong beside a 64 KiB stream on another connection
 * shows whether a request-response connection keeps its round trip beside a bulk one. Rounds
 * interleave the two and alternate which goes first; the summary gives each side's median and
 * range and the ratio of the medians.
 */
public final class ActorVersusPekkoTcp {

    private static final String USAGE = "ActorVersusPekkoTcp [--rounds=N measured rounds, default 5]"
            + " [--warm-up-rounds=N, default 3]"
            + " [--pings=N round trips per ping-pong, default 5000]"
            + " [--sparse=N round trips of the ping-pong with a pause before each request, default 200]"
            + " [--messages=N per 64 B stream, default 100000]"
            + " [--large=N per 64 KiB stream, default 4000] [--echoes=N per 64 B Streams echo, default 100000]"
            + " [--large-echoes=N per 64 KiB Streams echo, default 2000] [--huge=N 16 MiB round trips, default 20]"
            + " [--connections=N concurrent ping-pongs, default 64] [--each=N round trips of each, default 1000]"
            + " [--only=TEXT: only the workloads whose name contains it]"
            + " [--charts=DIR for the PNG charts, default bench/target/charts]";
    /** Small messages a TCP stream writes per turn of its mailbox, pipelined without acks. */
    private static final int WRITES_PER_TURN = 63;
    /**
     * A small-message rdma stream asks for an Acked every this many Sends (completions come in
     * order, so one Acked stands for those before it), as a TCP stream acks every N writes.
     */
    private static final int ACK_EVERY = 16;
    /** From this size on a TCP stream writes ACK-based, one message in flight: each fills the socket's buffer. */
    private static final int LARGE_WRITE = 16 * 1024;
    private static final long STEP_SECONDS = 120;

    private final ActorSystem<Void> system;
    private final int[] ports;
    /** Every measured round trip of the 64 B and 4 KiB ping-pongs, by series name, for the percentile chart. */
    private final Map<String, Histogram> roundTrips = new LinkedHashMap<>();
    private boolean measuring;
    /** Numbers the client actors' names. */
    private final AtomicInteger clients = new AtomicInteger();

    private ActorVersusPekkoTcp(ActorSystem<Void> system, int[] ports) {
        this.system = system;
        this.ports = ports;
    }

    /**
     * One workload: what it measures on a transport. Each run gives one value per figure; a
     * latency figure (us) is better lower, a rate better higher.
     */
    private record Workload(String name, List<String> figures, boolean latency, Run run) {
    }

    /** The pause before each request of the sparse ping-pong; Pekko's scheduler ticks every 10 ms. */
    private static final Duration SPARSE_GAP = Duration.ofMillis(10);

    private interface Run {
        double[] on(boolean rdma) throws Exception;
    }

    public static void main(String[] args) {
        BenchSupport.Options o = new BenchSupport.Options(args, USAGE, "rounds", "warm-up-rounds", "pings", "sparse",
                "messages", "large", "echoes", "large-echoes", "huge", "connections", "each", "only", "charts");
        int rounds = o.integer("rounds", 5, 1);
        // rdma-actors' 64 B stream took four runs of its own to reach the JIT's steady state (docs/performance.md)
        int warmUpRounds = o.integer("warm-up-rounds", 3, 1);
        Counts counts = new Counts(o.integer("pings", 5_000, 1), o.integer("messages", 100_000, 1),
                o.integer("large", 4_000, 1), o.integer("echoes", 100_000, 1), o.integer("large-echoes", 2_000, 1),
                o.integer("huge", 20, 1), o.integer("connections", 64, 1), o.integer("each", 1_000, 1),
                o.integer("sparse", 200, 1));
        Path charts = Path.of(o.string("charts", "bench/target/charts"));
        String only = o.string("only", "");
        BenchSupport.runOrReport("ActorVersusPekkoTcp", () -> run(rounds, warmUpRounds, counts, only, charts));
    }

    /**
     * Round trips per ping-pong, messages per stream, elements per Streams echo, 16 MiB round trips,
     * concurrent ping-pongs and the round trips of each, round trips of the sparse ping-pong.
     */
    private record Counts(int pings, int messages, int large, int echoes, int largeEchoes, int huge, int connections,
                          int each, int sparse) {
    }

    private static void run(int rounds, int warmUpRounds, Counts counts, String only, Path charts)
            throws Exception {
        // 64 KiB messages need 64 KiB buffers; both sides use the same settings for every workload
        int bufferSize = 64 * 1024;
        // the peer waits for completions and dispatches as this process does: -Drdma-actors... and -Dpekko... reach both
        Config config = ConfigFactory.load();
        String spin = config.getString("rdma-actors.completion-spin");
        String yield = config.getString("rdma-actors.completion-yield");
        System.out.printf("ActorVersusPekkoTcp: rdma-actors on the soft fabric vs Pekko TCP, two JVMs on"
                + " 127.0.0.1; %d rounds after %d to warm up, ping-pong %d round trips (%d with a pause of %d ms"
                + " before each), streams of %d x 64 B and"
                + " %d x 64 KiB, Streams echoes of %d x 64 B and %d x 64 KiB; completion-spin %s, completion-yield %s;"
                + " %s%n", rounds, warmUpRounds, counts.pings(), counts.sparse(), SPARSE_GAP.toMillis(),
                counts.messages(), counts.large(), counts.echoes(),
                counts.largeEchoes(), spin, yield, BenchSupport.defaultDispatcher(config));
        List<String> command = new ArrayList<>(List.of(BenchSupport.javaBinary(), "-cp",
                System.getProperty("java.class.path"), "-Xmx1g"));
        command.addAll(BenchSupport.settingsForChild());
        command.addAll(List.of(EchoSinkPeer.class.getName(), Integer.toString(bufferSize)));
        Process child = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "bench", ConfigFactory.parseString(
                "pekko.loglevel = WARNING\nrdma-actors.buffer-size = " + bufferSize).withFallback(config));
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(),
                    StandardCharsets.UTF_8));
            String line = out.readLine();
            while (line != null && !line.startsWith("PORTS ")) {
                line = out.readLine();
            }
            if (line == null) {
                throw new IllegalStateException("the peer printed no ports");
            }
            String[] p = line.split(" ");
            int[] ports = new int[p.length - 1];
            for (int i = 0; i < ports.length; i++) {
                ports[i] = Integer.parseInt(p[i + 1]);
            }
            new ActorVersusPekkoTcp(system, ports).rounds(rounds, warmUpRounds, counts, only, charts);
        } finally {
            child.getOutputStream().close();
            system.terminate();
            system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
            if (!child.waitFor(30, TimeUnit.SECONDS)) {
                child.destroyForcibly();
            }
        }
    }

    private void rounds(int rounds, int warmUpRounds, Counts counts, String only, Path charts) throws Exception {
        int messages = counts.messages();
        int large = counts.large();
        List<Workload> workloads = Stream.of(pingPong(64, counts.pings()), pingPong(4096, counts.pings()),
                sparsePingPong(counts.sparse()),
                pingPong(16 << 20, counts.huge()),
                new Workload("ping-pong 64 B x " + counts.connections(), List.of("round trips/s"), false,
                        rdma -> new double[] {concurrentPingPongs(rdma, counts.connections(), counts.each())}),
                new Workload("ping-pong 64 B beside a stream", List.of("p50 us", "p99 us", "stream MB/s"), true,
                        rdma -> pingPongBesideStream(rdma, counts.pings())),
                new Workload("stream 64 B", List.of("msg/s"), false, rdma -> new double[] {
                    messages / await(stream(rdma, 64, messages, new StreamControl()))}),
                new Workload("stream 64 KiB", List.of("MB/s"), false, rdma -> new double[] {
                    large * 65536.0 / 1e6 / await(stream(rdma, 65536, large, new StreamControl()))}),
                new Workload("Streams echo 64 B", List.of("MB/s"), false, rdma -> new double[] {
                    streamsEcho(rdma, 64, counts.echoes())}),
                new Workload("Streams echo 64 KiB", List.of("MB/s"), false, rdma -> new double[] {
                    streamsEcho(rdma, 65536, counts.largeEchoes())}))
                .filter(w -> w.name().contains(only)).toList();
        if (workloads.isEmpty()) {
            throw new IllegalArgumentException("no workload's name contains " + only);
        }
        // results[workload][figure][0: rdma-actors, 1: pekko tcp][round]
        double[][][][] results = new double[workloads.size()][][][];
        for (int w = 0; w < workloads.size(); w++) {
            results[w] = new double[workloads.get(w).figures().size()][2][rounds];
        }
        for (int r = -warmUpRounds; r < rounds; r++) {
            // the warm-up rounds warm both sides' JITs and are not counted
            measuring = r >= 0;
            for (int w = 0; w < workloads.size(); w++) {
                Workload workload = workloads.get(w);
                boolean rdmaFirst = Math.floorMod(r, 2) == 0;
                double[] first = run(workload, rdmaFirst);
                double[] second = run(workload, !rdmaFirst);
                double[] rdma = rdmaFirst ? first : second;
                double[] tcp = rdmaFirst ? second : first;
                StringBuilder line = new StringBuilder(r < 0 ? "warm-up " + (warmUpRounds + r + 1) + ": "
                        : "round " + (r + 1) + ": ");
                line.append(String.format("%-15s", workload.name()));
                for (int f = 0; f < workload.figures().size(); f++) {
                    line.append(String.format(" %s rdma-actors %.1f, pekko tcp %.1f;", workload.figures().get(f),
                            rdma[f], tcp[f]));
                    if (r >= 0) {
                        results[w][f][0][r] = rdma[f];
                        results[w][f][1][r] = tcp[f];
                    }
                }
                System.out.println(line);
            }
        }
        StringBuilder summary = new StringBuilder("SUMMARY ActorVersusPekkoTcp: median of " + rounds
                + " rounds, rdma-actors/pekko tcp:");
        for (int w = 0; w < workloads.size(); w++) {
            Workload workload = workloads.get(w);
            for (int f = 0; f < workload.figures().size(); f++) {
                double[] rdma = results[w][f][0];
                double[] tcp = results[w][f][1];
                double ratio = BenchSupport.median(rdma) / BenchSupport.median(tcp);
                String figure = workload.name() + " " + workload.figures().get(f);
                String judged = judge(figure, ratio);
                System.out.printf("%-22s rdma-actors %10.1f [%.1f-%.1f], pekko tcp %10.1f [%.1f-%.1f],"
                        + " ratio %.2f%s%n", figure, BenchSupport.median(rdma), BenchSupport.least(rdma),
                        BenchSupport.best(rdma), BenchSupport.median(tcp), BenchSupport.least(tcp), BenchSupport.best(tcp), ratio,
                        judged);
                summary.append(String.format(" %s %.2f%s;", figure, ratio, judged));
            }
            if (workload.name().equals("ping-pong 64 B") || workload.name().equals("ping-pong 4 KiB")) {
                // the tails' targets are rdma-actors' own: its p99 and p99.9 against its p50
                double p50 = BenchSupport.median(results[w][0][0]);
                double p99 = BenchSupport.median(results[w][1][0]) / p50;
                double p999 = BenchSupport.median(results[w][2][0]) / p50;
                String tails = String.format(" %s rdma-actors' p99 %.1fx its p50%s, p99.9 %.1fx%s", workload.name(),
                        p99, p99 <= 3 ? " (<= 3x)" : " MISSED (target <= 3x)", p999,
                        p999 <= 10 ? " (<= 10x)" : " MISSED (target <= 10x)");
                System.out.println(tails.trim());
                summary.append(tails).append(';');
            }
        }
        System.out.println(summary);
        chart(workloads, results, charts);
    }

    /** The round trips' percentiles, and each rate's median relative to Pekko TCP's (rates span decades). */
    private void chart(List<Workload> workloads, double[][][][] results, Path dir) {
        List<Path> written = new ArrayList<>();
        if (!roundTrips.isEmpty()) {
            written.add(BenchCharts.percentiles(dir, "actor-vs-pekko-tcp-latency.png",
                    "Round trip, two JVMs: rdma-actors (soft fabric) vs Pekko IO TCP", roundTrips));
        }
        List<String> categories = new ArrayList<>();
        List<Double> ratios = new ArrayList<>();
        for (int w = 0; w < workloads.size(); w++) {
            if (!workloads.get(w).latency()) {
                categories.add(workloads.get(w).name());
                ratios.add(BenchSupport.median(results[w][0][0]) / BenchSupport.median(results[w][0][1]));
            }
        }
        if (!categories.isEmpty()) {
            Map<String, double[]> series = new LinkedHashMap<>();
            series.put("rdma-actors (soft fabric)", ratios.stream().mapToDouble(Double::doubleValue).toArray());
            series.put("Pekko TCP", ratios.stream().mapToDouble(r -> 1.0).toArray());
            written.add(BenchCharts.bars(dir, "actor-vs-pekko-tcp-rates.png",
                    "Throughput relative to Pekko TCP, two JVMs (medians)", "x Pekko TCP", categories, series));
        }
        System.out.println("charts: " + written);
    }

    /** One side of a workload; a failure says which. */
    private static double[] run(Workload workload, boolean rdma) throws Exception {
        try {
            return workload.run().on(rdma);
        } catch (TimeoutException e) {
            throw new IllegalStateException(workload.name() + " on " + (rdma ? "rdma-actors" : "pekko tcp")
                    + ": no result within " + STEP_SECONDS + " s", e);
        }
    }

    /**
     * The target for a ratio to Pekko TCP, and whether it is met: round trips' p50 and p99
     * at most Pekko TCP's (16 MiB, bound by copying, has none; p99.9 is judged against the p50), the
     * 64 B stream at least 1.5x, other rates at least Pekko TCP's.
     */
    private static String judge(String figure, double ratio) {
        if (figure.startsWith("ping-pong 16 MiB") || figure.endsWith("p99.9 us")) {
            return "";
        }
        if (figure.endsWith(" us")) {
            return ratio <= 1.0 ? " (<= 1.0)" : " MISSED (target <= 1.0)";
        }
        double least = figure.startsWith("stream 64 B ") ? 1.5 : 1.0;
        return ratio >= least ? " (>= " + least + ")" : " MISSED (target >= " + least + ")";
    }

    /** Round trips in microseconds: p50, p99 and p99.9 of one run. */
    private Workload pingPong(int size, int count) {
        String bytes = size >= 1 << 20 ? (size >> 20) + " MiB" : size >= 1024 ? size / 1024 + " KiB" : size + " B";
        return new Workload("ping-pong " + bytes, List.of("p50 us", "p99 us", "p99.9 us"), true, rdma -> {
                    Histogram h = await(roundTrips(rdma, size, count, Duration.ZERO));
                    if (measuring && size <= 4096) {
                        roundTrips.computeIfAbsent((rdma ? "rdma-actors " : "Pekko IO TCP ") + bytes,
                                name -> new Histogram(3_600_000_000L, 3)).add(h);
                    }
                    return new double[] {h.getValueAtPercentile(50) / 1000.0, h.getValueAtPercentile(99) / 1000.0,
                        h.getValueAtPercentile(99.9) / 1000.0};
                });
    }

    /**
     * A request-response connection whose requests come one at a time with a pause before each
     * (SPARSE_GAP, as the scheduler rounds it): each side waits for the next message idle, as an
     * RPC server between requests does, so each round trip takes the wake-up path of a connection
     * that went quiet rather than a spin's poll.
     */
    private Workload sparsePingPong(int count) {
        String name = "ping-pong 64 B every " + SPARSE_GAP.toMillis() + " ms";
        return new Workload(name, List.of("p50 us", "p99 us"), true, rdma -> {
            Histogram h = await(roundTrips(rdma, 64, count, SPARSE_GAP));
            return new double[] {h.getValueAtPercentile(50) / 1000.0, h.getValueAtPercentile(99) / 1000.0};
        });
    }

    /**
     * {@code connections} ping-pongs of 64 B at once, {@code count} round trips each: round trips
     * per second from the first Send of any to the last answer of all.
     */
    private double concurrentPingPongs(boolean rdma, int connections, int count) throws Exception {
        List<CompletableFuture<Histogram>> pingPongs = new ArrayList<>();
        for (int i = 0; i < connections; i++) {
            pingPongs.add(roundTrips(rdma, 64, count, Duration.ZERO));
        }
        long first = Long.MAX_VALUE;
        long last = Long.MIN_VALUE;
        for (CompletableFuture<Histogram> p : pingPongs) {
            Histogram h = await(p);
            first = Math.min(first, h.getStartTimeStamp());
            last = Math.max(last, h.getEndTimeStamp());
        }
        return (double) connections * count / ((last - first) / 1e9);
    }

    /**
     * A 64 B ping-pong on one connection while another streams 64 KiB messages: whether a
     * request-response connection keeps its round trip beside a bulk one (p50 and p99, us).
     */
    private double[] pingPongBesideStream(boolean rdma, int pings) throws Exception {
        StreamControl control = new StreamControl();
        CompletableFuture<Double> stream = stream(rdma, 65536, Integer.MAX_VALUE, control);
        await(control.flowing);
        Histogram h = await(roundTrips(rdma, 64, pings, Duration.ZERO));
        control.stopped = true;
        double seconds = await(stream);
        return new double[] {h.getValueAtPercentile(50) / 1000.0, h.getValueAtPercentile(99) / 1000.0,
            control.taken.get() * 65536.0 / 1e6 / seconds};
    }

    /** Seconds from the first message of a one-way stream to the sink's answer to the last. */
    private CompletableFuture<Double> stream(boolean rdma, int size, int count, StreamControl control) {
        return rdma ? rdmaStream(size, count, control) : tcpStream(size, count, control);
    }

    /**
     * A stream's first message was taken when {@code flowing} completes; once {@code stopped}, it
     * closes its connection on the next acknowledgement, without the sink's count.
     */
    static final class StreamControl {
        final CompletableFuture<Void> flowing = new CompletableFuture<>();
        /** Messages the transport took (acknowledged). */
        final AtomicInteger taken = new AtomicInteger();
        volatile boolean stopped;
    }

    /**
     * Elements of {@code size} bytes through an outgoing connection to the peer's echo and back, the
     * upstream completed after the last: MB/s echoed, until the last byte came back.
     */
    private double streamsEcho(boolean rdma, int size, int count) throws Exception {
        int port = ports[rdma ? 4 : 5];
        Flow<ByteString, ByteString, ?> connection = rdma
                ? RdmaStreams.get(system).outgoingConnection("127.0.0.1", port)
                : Framing.simpleFramingProtocol(EchoSinkPeer.FRAME).join(
                        org.apache.pekko.stream.javadsl.Tcp.get(system).outgoingConnection("127.0.0.1", port));
        ByteString element = ByteString.fromArrayUnsafe(new byte[size]);
        long start = System.nanoTime();
        long echoed = await(Source.repeat(element).take(count).via(connection)
                .runFold(0L, (bytes, e) -> bytes + e.size(), system).toCompletableFuture());
        long elapsed = System.nanoTime() - start;
        if (echoed != (long) size * count) {
            throw new IllegalStateException(echoed + " bytes echoed of " + (long) size * count);
        }
        return echoed / 1e6 / (elapsed / 1e9);
    }

    // ------------------------------------------------------------------ rdma-actors

    private <T> T await(CompletableFuture<T> result) throws Exception {
        return result.get(STEP_SECONDS, TimeUnit.SECONDS);
    }

    private void connect(ActorRef<RdmaProtocol.ConnectionEvent> client, int port) {
        Rdma.get(system).manager().tell(RdmaProtocol.Connect.to(new InetSocketAddress("127.0.0.1", port), client));
    }

    /** A ping-pong on either transport: {@link #rdmaPingPong} or {@link #tcpPingPong}. */
    private CompletableFuture<Histogram> roundTrips(boolean rdma, int size, int count, Duration gap) {
        return rdma ? rdmaPingPong(size, count, gap) : tcpPingPong(size, count, gap);
    }

    /**
     * Round trips in a histogram whose time stamps are the first Send's and the last answer's
     * System.nanoTime(); each request after the first is sent on the answer, or {@code gap} after it.
     */
    private CompletableFuture<Histogram> rdmaPingPong(int size, int count, Duration gap) {
        CompletableFuture<Histogram> result = new CompletableFuture<>();
        ByteString message = ByteString.fromArrayUnsafe(new byte[size]); // one for every Send, as TcpClient's
        ActorRef<RdmaProtocol.ConnectionEvent> client = system.systemActorOf(Behaviors.setup(ctx -> {
            Histogram h = new Histogram(3_600_000_000L, 3);
            ActorRef<?>[] peer = new ActorRef<?>[1];
            // written where the request is sent, read when its answer comes, which the request's tell precedes
            long[] start = new long[1];
            Runnable next = () -> {
                start[0] = System.nanoTime();
                EchoSinkPeer.connection(peer[0]).tell(RdmaProtocol.Send.of(message, null));
            };
            return Behaviors.receive(RdmaProtocol.ConnectionEvent.class)
                    .onMessage(RdmaProtocol.Connected.class, c -> {
                        peer[0] = c.connection();
                        start[0] = System.nanoTime();
                        h.setStartTimeStamp(start[0]);
                        EchoSinkPeer.connection(peer[0]).tell(RdmaProtocol.Send.of(message, null));
                        return Behaviors.same();
                    })
                    .onMessage(RdmaProtocol.Received.class, r -> {
                        long now = System.nanoTime();
                        h.recordValue(now - start[0]);
                        if (h.getTotalCount() == count) {
                            h.setEndTimeStamp(now);
                            EchoSinkPeer.connection(peer[0]).tell(new RdmaProtocol.Close());
                            result.complete(h);
                        } else if (gap.isZero()) {
                            next.run();
                        } else {
                            system.scheduler().scheduleOnce(gap, next, system.executionContext());
                        }
                        return Behaviors.same();
                    })
                    .onMessage(RdmaProtocol.ConnectFailed.class, f -> failed(result, f))
                    .onMessage(RdmaProtocol.Disconnected.class, d -> disconnected(result, d))
                    .onMessage(RdmaProtocol.ConnectionEvent.class, e -> Behaviors.same())
                    .build();
        }), "rdma-ping-" + clients.incrementAndGet(), EchoSinkPeer.handlerProps(system));
        connect(client, ports[0]);
        return result;
    }

    /** The end of a client's connection: after its result, or (failing it) before. */
    private static <T> Behavior<RdmaProtocol.ConnectionEvent> disconnected(CompletableFuture<T> result,
                                                                           RdmaProtocol.Disconnected d) {
        result.completeExceptionally(new IllegalStateException("disconnected before the end: " + d.reason()));
        return Behaviors.stopped();
    }

    private static <T> Behavior<RdmaProtocol.ConnectionEvent> failed(CompletableFuture<T> result,
                                                                     RdmaProtocol.ConnectFailed f) {
        result.completeExceptionally(new IllegalStateException("connect failed: " + f.reason()));
        return Behaviors.stopped();
    }

    /** As {@link #stream}. */
    private CompletableFuture<Double> rdmaStream(int size, int count, StreamControl control) {
        CompletableFuture<Double> result = new CompletableFuture<>();
        ByteString message = ByteString.fromArrayUnsafe(new byte[size]); // one for every Send, as TcpStream's
        int ackEvery = size < LARGE_WRITE ? ACK_EVERY : 1;
        // a send queue's worth outstanding (less one slot for the end marker), at most 4 MiB, as a
        // TCP socket's buffer holds
        int window = Math.min(Rdma.get(system).settings().sendQueueDepth() - 1, Math.max(1, (4 << 20) / size));
        ActorRef<RdmaProtocol.ConnectionEvent> client = system.systemActorOf(Behaviors.setup(ctx -> {
            ActorRef<?>[] peer = new ActorRef<?>[1];
            long[] start = new long[1];
            int[] sent = new int[1];
            int[] acked = new int[1];
            Runnable send = () -> {
                // what the window allows, told as one Batch (docs/tuning.md)
                List<RdmaProtocol.DataCommand> sends = new ArrayList<>();
                while (sent[0] < count && sent[0] - acked[0] < window) {
                    int n = sent[0]++;
                    sends.add(RdmaProtocol.Send.of(message, (n + 1) % ackEvery == 0 || n + 1 == count ? n : null));
                    if (sent[0] == count) {
                        // the end marker follows the last message on the same queue pair, in order
                        sends.add(RdmaProtocol.Send.of(new byte[1], null).withImmediate(1));
                    }
                }
                if (!sends.isEmpty()) {
                    EchoSinkPeer.connection(peer[0]).tell(new RdmaProtocol.Batch(sends));
                }
            };
            return Behaviors.receive(RdmaProtocol.ConnectionEvent.class)
                    .onMessage(RdmaProtocol.Connected.class, c -> {
                        peer[0] = c.connection();
                        start[0] = System.nanoTime();
                        send.run();
                        return Behaviors.same();
                    })
                    .onMessage(RdmaProtocol.Acked.class, a -> {
                        int through = (Integer) a.token() + 1;
                        control.flowing.complete(null);
                        control.taken.addAndGet(through - acked[0]);
                        acked[0] = through;
                        if (control.stopped) {
                            if (result.complete((System.nanoTime() - start[0]) / 1e9)) {
                                EchoSinkPeer.connection(peer[0]).tell(new RdmaProtocol.Close());
                            }
                        } else {
                            send.run();
                        }
                        return Behaviors.same();
                    })
                    .onMessage(RdmaProtocol.Received.class, r -> {
                        long delivered = r.data().asByteBuffer().getLong();
                        if (delivered != count) {
                            result.completeExceptionally(new IllegalStateException(
                                    "the sink counted " + delivered + " of " + count));
                        }
                        result.complete((System.nanoTime() - start[0]) / 1e9);
                        EchoSinkPeer.connection(peer[0]).tell(new RdmaProtocol.Close());
                        return Behaviors.same();
                    })
                    .onMessage(RdmaProtocol.CommandFailed.class, f -> {
                        result.completeExceptionally(new IllegalStateException("refused: " + f.cause(), f.cause()));
                        return Behaviors.same();
                    })
                    .onMessage(RdmaProtocol.ConnectFailed.class, f -> failed(result, f))
                    .onMessage(RdmaProtocol.Disconnected.class, d -> disconnected(result, d))
                    .onMessage(RdmaProtocol.ConnectionEvent.class, e -> Behaviors.same())
                    .build();
        }), "rdma-stream-" + clients.incrementAndGet(), EchoSinkPeer.handlerProps(system));
        connect(client, ports[1]);
        return result;
    }

    // ------------------------------------------------------------------ Pekko IO TCP

    /** As {@link #rdmaPingPong}. */
    private CompletableFuture<Histogram> tcpPingPong(int size, int count, Duration gap) {
        CompletableFuture<Histogram> result = new CompletableFuture<>();
        boolean messages = size > 64 * 1024; // more than one read carries: to the message echo
        classic().systemActorOf(Props.create(TcpPingPong.class, () -> new TcpPingPong(
                new InetSocketAddress("127.0.0.1", ports[messages ? 6 : 2]), size, count, messages, gap, result)),
                "tcp-ping-" + clients.incrementAndGet());
        return result;
    }

    /** The client actors are system actors: the user guardian is the typed one. */
    private ExtendedActorSystem classic() {
        return (ExtendedActorSystem) system.classicSystem();
    }

    /** As {@link #stream}. */
    private CompletableFuture<Double> tcpStream(int size, int count, StreamControl control) {
        CompletableFuture<Double> result = new CompletableFuture<>();
        classic().systemActorOf(Props.create(TcpStream.class, () -> new TcpStream(
                new InetSocketAddress("127.0.0.1", ports[3]), size, count, result, control)),
                "tcp-stream-" + clients.incrementAndGet());
        return result;
    }

    /**
     * A Pekko IO TCP client of one workload: connects, registers, runs the workload from
     * {@link #connected()}, and fails its result on a refused command.
     */
    abstract static class TcpClient<R> extends AbstractActor {
        final InetSocketAddress remote;
        final ByteString message;
        final int count;
        final CompletableFuture<R> result;
        org.apache.pekko.actor.ActorRef connection;

        TcpClient(InetSocketAddress remote, ByteString message, int count, CompletableFuture<R> result) {
            this.remote = remote;
            this.message = message;
            this.count = count;
            this.result = result;
        }

        @Override
        public void preStart() {
            Tcp.get(getContext().getSystem()).manager().tell(TcpMessage.connect(remote), getSelf());
        }

        abstract void connected();

        /** The workload's own messages, then what every client handles alike. */
        Receive receive(ReceiveBuilder workload) {
            return workload
                    .match(Tcp.Connected.class, c -> {
                        connection = getSender();
                        connection.tell(TcpMessage.register(getSelf()), getSelf());
                        connected();
                    })
                    .match(Tcp.CommandFailed.class, f -> result.completeExceptionally(
                            new IllegalStateException("tcp: " + f)))
                    .match(Tcp.ConnectionClosed.class, c -> getContext().stop(getSelf()))
                    .build();
        }
    }

    /** Writes a message (framed by its length for the message echo), reads until all of it came back, times that, repeats. */
    static final class TcpPingPong extends TcpClient<Histogram> {
        /** The pause before a request is over: send it. */
        private static final Object NEXT = new Object();
        private final Histogram histogram = new Histogram(3_600_000_000L, 3);
        private final Duration gap;
        private long start;
        private int received;

        TcpPingPong(InetSocketAddress remote, int size, int count, boolean framed, Duration gap,
                    CompletableFuture<Histogram> result) {
            super(remote, framed ? ByteString.fromArray(ByteBuffer.allocate(4 + size).putInt(size).array())
                    : ByteString.fromArray(new byte[size]), count, result);
            this.gap = gap;
        }

        @Override
        void connected() {
            ping();
            histogram.setStartTimeStamp(start);
        }

        @Override
        public Receive createReceive() {
            return receive(receiveBuilder()
                    .match(Tcp.Received.class, r -> {
                        received += r.data().size();
                        if (received < message.size()) {
                            return;
                        }
                        long now = System.nanoTime();
                        histogram.recordValue(now - start);
                        received = 0;
                        if (histogram.getTotalCount() == count) {
                            histogram.setEndTimeStamp(now);
                            result.complete(histogram);
                            connection.tell(TcpMessage.close(), getSelf());
                        } else if (gap.isZero()) {
                            ping();
                        } else {
                            getContext().getSystem().scheduler().scheduleOnce(gap, getSelf(), NEXT,
                                    getContext().getDispatcher(), getSelf());
                        }
                    })
                    .matchEquals(NEXT, n -> ping()));
        }

        private void ping() {
            start = System.nanoTime();
            connection.tell(TcpMessage.write(message), getSelf());
        }
    }

    /** Announces the total, then writes one message per ack; times until the sink's answer. */
    static final class TcpStream extends TcpClient<Double> {
        private final StreamControl control;
        private long start;
        /** Messages handed to the connection and not refused. */
        private int sent;
        /** A write was refused: the rest wait for WritingResumed. */
        private boolean suspended;

        /** Writes per turn of the mailbox: pipelined small messages, one large one awaiting its ack. */
        private final int perTurn;

        TcpStream(InetSocketAddress remote, int size, int count, CompletableFuture<Double> result,
                  StreamControl control) {
            super(remote, ByteString.fromArray(new byte[size]), count, result);
            this.control = control;
            this.perTurn = size < LARGE_WRITE ? WRITES_PER_TURN : 1;
        }

        @Override
        void connected() {
            start = System.nanoTime();
            ByteString total = ByteString.fromArray(ByteBuffer.allocate(8)
                    .putLong((long) count * message.size()).array());
            connection.tell(TcpMessage.write(total), getSelf());
            getSelf().tell(Written.INSTANCE, getSelf());
        }

        /**
         * Pekko IO's flow control as its users write. Small messages are pipelined NACK-based: a
         * write per message with no ack awaited, WRITES_PER_TURN at a time (then a turn of this actor's
         * mailbox, so a refusal gets in); a write the connection cannot take yet is refused, and
         * so is every later one, until ResumeWriting is answered with WritingResumed, when writing
         * goes on from the first one refused. A large message, which fills the socket's buffer by
         * itself, is written ACK-based, the next on the ack of the one before.
         */
        @Override
        public Receive createReceive() {
            return receive(receiveBuilder()
                    .match(Written.class, w -> writeSome())
                    .match(Tcp.CommandFailed.class, f -> f.cmd() instanceof Tcp.Write write
                            && write.ack() instanceof Tcp.NoAck refused && refused.token() instanceof Integer, f -> {
                        if (!suspended) {
                            suspended = true;
                            sent = (Integer) ((Tcp.NoAck) ((Tcp.Write) f.cmd()).ack()).token();
                            control.taken.set(sent);
                            connection.tell(TcpMessage.resumeWriting(), getSelf());
                        }
                    })
                    .match(Tcp.WritingResumed.class, r -> {
                        suspended = false;
                        writeSome();
                    })
                    .match(Tcp.Received.class, r -> {
                        result.complete((System.nanoTime() - start) / 1e9);
                        connection.tell(TcpMessage.close(), getSelf());
                    }));
        }

        private void writeSome() {
            if (suspended) {
                return;
            }
            control.flowing.complete(null);
            if (control.stopped) {
                if (result.complete((System.nanoTime() - start) / 1e9)) {
                    connection.tell(TcpMessage.close(), getSelf());
                }
                return;
            }
            if (perTurn == 1) {
                control.taken.set(sent);
                if (sent < count) {
                    sent++;
                    connection.tell(TcpMessage.write(message, Written.INSTANCE), getSelf());
                }
                return;
            }
            for (int i = 0; i < perTurn && sent < count; i++, sent++) {
                connection.tell(TcpMessage.write(message, TcpMessage.noAck(sent)), getSelf());
            }
            control.taken.set(sent);
            if (sent < count) {
                getSelf().tell(Written.INSTANCE, getSelf());
            }
        }
    }

    /** The ack of a TCP write; the TCP stream's turn to write more. */
    static final class Written implements Tcp.Event {
        static final Written INSTANCE = new Written();
    }
}
