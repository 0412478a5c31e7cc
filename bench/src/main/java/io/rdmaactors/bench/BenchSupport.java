package io.rdmaactors.bench;

import com.typesafe.config.Config;
import io.rdmaactors.actors.Rdma;
import io.rdmaactors.actors.RdmaProtocol;
import io.rdmaactors.cm.CmEvent;
import io.rdmaactors.verbs.CmId;
import io.rdmaactors.verbs.ConnectionParameters;
import io.rdmaactors.verbs.EventChannel;
import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.PortSpace;
import java.io.File;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/** What the benchmarks share: options, CM event waits, statistics, formatting. */
public final class BenchSupport {

    private BenchSupport() {
    }

    /** Options given as {@code --name=value} (or {@code --name value}); unknown names are refused. */
    static final class Options {
        private final Map<String, String> values = new HashMap<>();
        private final String usage;

        Options(String[] args, String usage, String... known) {
            this.usage = usage;
            for (int i = 0; i < args.length; i++) {
                String a = args[i];
                if (a.equals("-h") || a.equals("--help")) {
                    System.out.println(usage);
                    System.exit(0);
                }
                if (!a.startsWith("--")) {
                    throw new IllegalArgumentException("unexpected argument '" + a + "'\n" + usage);
                }
                String name;
                String value;
                int eq = a.indexOf('=');
                if (eq > 0) {
                    name = a.substring(2, eq);
                    value = a.substring(eq + 1);
                } else if (i + 1 < args.length) {
                    name = a.substring(2);
                    value = args[++i];
                } else {
                    throw new IllegalArgumentException("option " + a + " needs a value\n" + usage);
                }
                if (!Arrays.asList(known).contains(name)) {
                    throw new IllegalArgumentException("unknown option --" + name + "\n" + usage);
                }
                values.put(name, value);
            }
        }

        String string(String name, String defaultValue) {
            return values.getOrDefault(name, defaultValue);
        }

        int integer(String name, int defaultValue, int min) {
            String v = values.get(name);
            int n = v == null ? defaultValue : Integer.parseInt(v.replace("_", ""));
            if (n < min) {
                throw new IllegalArgumentException("--" + name + " must be at least " + min + "\n" + usage);
            }
            return n;
        }
    }

    /** What a benchmark runs; it prints its own SUMMARY line when it succeeds. */
    interface Body {
        void run() throws Exception;
    }

    /** Runs a benchmark; a failure still ends with a SUMMARY line (and exit status 1). */
    static void runOrReport(String name, Body body) {
        try {
            body.run();
        } catch (Exception | AssertionError e) {
            e.printStackTrace();
            System.out.println("SUMMARY " + name + ": FAILED: " + e);
            System.exit(1);
        }
    }

    public static <E extends CmEvent> E expect(EventChannel channel, Class<E> kind, Duration timeout) throws Exception {
        CmEvent event = channel.await(timeout);
        if (event == null) {
            throw new IllegalStateException("no " + kind.getSimpleName() + " within " + timeout);
        }
        if (!kind.isInstance(event)) {
            throw new IllegalStateException("expected " + kind.getSimpleName() + ", got " + event);
        }
        return kind.cast(event);
    }

    /**
     * Connects a client id to {@code listener} (bound and listening on {@code events} of {@code fabric}) through the
     * CM: {@code end} makes each side's QP on its id, the client's once its route is resolved, the
     * server's on the request; returns {client, server} once both are established.
     */
    static <E> List<E> connectEnds(Fabric fabric, EventChannel events, CmId listener, Function<CmId, E> end,
                                   Duration step) throws Exception {
        CmId clientId = fabric.createCmId(events, PortSpace.TCP);
        clientId.resolveAddress(null, listener.localAddress(), step);
        expect(events, CmEvent.AddrResolved.class, step);
        clientId.resolveRoute(step);
        expect(events, CmEvent.RouteResolved.class, step);
        E client = end.apply(clientId);
        clientId.connect(ConnectionParameters.of(null));
        CmId serverId = events.cmId(expect(events, CmEvent.ConnectRequest.class, step).id());
        E server = end.apply(serverId);
        serverId.accept(ConnectionParameters.of(null));
        expect(events, CmEvent.Established.class, step);
        expect(events, CmEvent.Established.class, step);
        return List.of(client, server);
    }

    /**
     * A listener on {@code address} that connects a client to itself: on Listening it connects the
     * handler {@code client} makes, and accepts each request for {@code server}.
     */
    static Behavior<RdmaProtocol.ListenerEvent> selfConnecting(
            InetSocketAddress address, ActorRef<RdmaProtocol.ConnectionEvent> server,
            Function<ActorContext<RdmaProtocol.ListenerEvent>, ActorRef<RdmaProtocol.ConnectionEvent>> client,
            Duration timeout) {
        return selfConnecting(address, server, client, timeout, RdmaProtocol.ConnectionOptions.none());
    }

    /** The same, both ends set up with {@code options}. */
    static Behavior<RdmaProtocol.ListenerEvent> selfConnecting(
            InetSocketAddress address, ActorRef<RdmaProtocol.ConnectionEvent> server,
            Function<ActorContext<RdmaProtocol.ListenerEvent>, ActorRef<RdmaProtocol.ConnectionEvent>> client,
            Duration timeout, RdmaProtocol.ConnectionOptions options) {
        return Behaviors.setup(ctx -> {
            Rdma.get(ctx.getSystem()).manager().tell(new RdmaProtocol.Listen(address, ctx.getSelf(), 8)
                    .withOptions(options));
            return Behaviors.receive(RdmaProtocol.ListenerEvent.class)
                    .onMessage(RdmaProtocol.Listening.class, l -> {
                        Rdma.get(ctx.getSystem()).manager().tell(RdmaProtocol.Connect.to(l.localAddress(),
                                client.apply(ctx)).withTimeout(timeout).withOptions(options));
                        return Behaviors.same();
                    })
                    .onMessage(RdmaProtocol.ConnectionRequested.class, r -> {
                        r.connection().tell(new RdmaProtocol.Accept(server, null));
                        return Behaviors.same();
                    })
                    .onMessage(RdmaProtocol.ListenerEvent.class, e -> Behaviors.same())
                    .build();
        });
    }

    /** Waits for the next event of a kind, skipping others (late TIMEWAIT_EXIT and the like). */
    public static <E extends CmEvent> E skipTo(EventChannel channel, Class<E> kind, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            long left = deadline - System.nanoTime();
            CmEvent event = left > 0 ? channel.await(Duration.ofNanos(left)) : null;
            if (event == null) {
                throw new IllegalStateException("no " + kind.getSimpleName() + " within " + timeout);
            }
            if (kind.isInstance(event)) {
                return kind.cast(event);
            }
        }
    }

    /**
     * Bytes the JVM's live threads have allocated so far (HotSpot's per-thread counters): what a
     * piece of work allocates is the difference across it, while no other work runs. A thread that
     * ends meanwhile takes its count along: it reads its own ({@link #allocatedByThisThread}) first.
     */
    static long allocatedBytes() {
        com.sun.management.ThreadMXBean threads = threads();
        long total = 0;
        for (long bytes : threads.getThreadAllocatedBytes(threads.getAllThreadIds())) {
            total += Math.max(0, bytes); // -1: the thread ended meanwhile
        }
        return total;
    }

    /** Bytes the calling thread has allocated since it started. */
    static long allocatedByThisThread() {
        return threads().getCurrentThreadAllocatedBytes();
    }

    private static com.sun.management.ThreadMXBean threads() {
        return (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    }

    static double least(double[] values) {
        double least = Double.POSITIVE_INFINITY;
        for (double v : values) {
            least = Math.min(least, v);
        }
        return least;
    }

    static double best(double[] values) {
        double best = Double.NEGATIVE_INFINITY;
        for (double v : values) {
            best = Math.max(best, v);
        }
        return best;
    }

    static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    /** The median of the per-round ratios a[i] / b[i]: rounds run back to back, so drift cancels. */
    static double pairedRatio(double[] a, double[] b) {
        double[] ratios = new double[a.length];
        for (int i = 0; i < a.length; i++) {
            ratios[i] = a[i] / b[i];
        }
        return median(ratios);
    }

    /**
     * Prints round trips (nanoseconds, sorted here) as ib_send_lat prints its table: half the round
     * trip, t_typical the median; then the SUMMARY line.
     */
    static void printLatencyTable(String name, String device, int size, long[] rtt) {
        Arrays.sort(rtt);
        int n = rtt.length;
        double typical = rtt[n / 2] / 2e3;
        double average = Arrays.stream(rtt).average().orElse(0) / 2e3;
        System.out.printf("#bytes #iterations t_min[usec] t_max[usec] t_typical[usec] t_avg[usec]"
                + " 99%% percentile[usec] 99.9%% percentile[usec]   (half round trip, as ib_send_lat)%n");
        System.out.printf("%d %d %.2f %.2f %.2f %.2f %.2f %.2f%n", size, n, rtt[0] / 2e3, rtt[n - 1] / 2e3, typical,
                average, percentile(rtt, 0.99) / 2e3, percentile(rtt, 0.999) / 2e3);
        System.out.printf("SUMMARY %s: device %s, %d bytes, t_typical %.2f us (half round trip; round trip %.2f us),"
                + " t_avg %.2f us over %d round trips%n", name, device, size, typical, typical * 2, average, n);
    }

    private static long percentile(long[] sorted, double p) {
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p * sorted.length) - 1)];
    }

    /**
     * The default dispatcher's thread count as Pekko sizes it (cores x parallelism-factor, rounded
     * up, within parallelism-min and -max), and the settings that decide it, for a benchmark's
     * header: on fewer than 8 cores Pekko's own minimum of 8 oversubscribes them.
     */
    static String defaultDispatcher(Config config) {
        Config fj = config.getConfig("pekko.actor.default-dispatcher.fork-join-executor");
        int cores = Runtime.getRuntime().availableProcessors();
        int threads = Math.min(Math.max((int) Math.ceil(cores * fj.getDouble("parallelism-factor")),
                fj.getInt("parallelism-min")), fj.getInt("parallelism-max"));
        return String.format("default dispatcher %d threads on %d cores (parallelism-min %d, -max %d)", threads, cores,
                fj.getInt("parallelism-min"), fj.getInt("parallelism-max"));
    }

    /** This JVM's -Drdma-actors.*, -Dpekko.* and -Dbench.* settings, for a child JVM that must run as this one does. */
    static List<String> settingsForChild() {
        List<String> options = new ArrayList<>();
        for (String key : System.getProperties().stringPropertyNames()) {
            if (key.startsWith("rdma-actors.") || key.startsWith("pekko.") || key.startsWith("bench.")) {
                options.add("-D" + key + "=" + System.getProperty(key));
            }
        }
        Collections.sort(options);
        return options;
    }

    static String javaBinary() {
        return System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
    }

    public static void closeAll(AutoCloseable... resources) throws Exception {
        for (AutoCloseable c : resources) {
            if (c != null) {
                c.close();
            }
        }
    }
}
