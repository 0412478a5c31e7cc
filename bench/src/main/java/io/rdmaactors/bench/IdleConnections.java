package io.rdmaactors.bench;

import com.typesafe.config.ConfigFactory;
import io.rdmaactors.actors.Rdma;
import io.rdmaactors.actors.RdmaProtocol;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.actor.AbstractActor;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.Props;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.io.Tcp;
import org.apache.pekko.io.TcpMessage;

/**
 * What idle connections cost: N connections through the actor API on the soft fabric against N
 * Pekko IO TCP connections, each measured in a fresh JVM (so one's memory does not count for the
 * other): threads, RSS, CPU while idle for {@code --idle} seconds, the setup rate (first Connect to
 * last Connected, at most 200 connects in flight) and how long the actor system takes to shut down.
 * By default both ends are in the measured JVM; {@code --two-jvms} puts the servers in a child
 * ({@link EchoSinkPeer}) and reports its RSS too.
 */
public final class IdleConnections {

    private static final String USAGE = "IdleConnections [--counts=1000,5000,10000] [--idle=10 seconds]"
            + " [--two-jvms]";
    private static final int IN_FLIGHT = 200;
    private static final long STEP_SECONDS = 300;
    /** A side that cannot set its connections up in this long fails (out of file descriptors, say). */
    private static final long SETUP_SECONDS = 120;

    private IdleConnections() {
    }

    public static void main(String[] args) {
        Map<String, String> named = new LinkedHashMap<>();
        for (String a : args) {
            if (a.equals("-h") || a.equals("--help")) {
                System.out.println(USAGE);
                return;
            }
            int eq = a.indexOf('=');
            named.put(eq > 0 ? a.substring(2, eq) : a.substring(2), eq > 0 ? a.substring(eq + 1) : "true");
        }
        if (named.containsKey("measure")) {
            BenchSupport.runOrReport("IdleConnections", () -> measure(named.get("measure"),
                    Integer.parseInt(named.get("count")), Integer.parseInt(named.get("idle")),
                    named.containsKey("port") ? Integer.parseInt(named.get("port")) : 0));
            System.exit(0);
        }
        String counts = named.getOrDefault("counts", "1000,5000,10000");
        int idle = Integer.parseInt(named.getOrDefault("idle", "10"));
        boolean twoJvms = named.containsKey("two-jvms");
        BenchSupport.runOrReport("IdleConnections", () -> compare(counts, idle, twoJvms));
    }

    // ------------------------------------------------------------------ the parent: one child per measurement

    private static void compare(String counts, int idle, boolean twoJvms) throws Exception {
        System.out.printf("IdleConnections: rdma-actors (soft fabric) vs Pekko IO TCP, %s, idle %d s, each in a"
                + " fresh JVM (-Xmx2g)%n", twoJvms ? "servers in a second JVM" : "both ends in one JVM", idle);
        StringBuilder summary = new StringBuilder("SUMMARY IdleConnections:");
        TreeMap<Integer, Long> rssByCount = new TreeMap<>();
        int order = 0;
        for (String c : counts.split(",")) {
            int count = Integer.parseInt(c.trim());
            Map<String, Map<String, String>> by = new LinkedHashMap<>();
            for (String transport : order++ % 2 == 0 ? List.of("rdma", "tcp") : List.of("tcp", "rdma")) {
                try {
                    by.put(transport, child(transport, count, idle, twoJvms));
                } catch (Exception e) {
                    // one side failing (out of file descriptors, say) is a result too: report it, go on
                    by.put(transport, Map.of("failed", String.valueOf(e.getMessage()).replace(' ', '_')));
                }
            }
            for (String transport : List.of("rdma", "tcp")) {
                Map<String, String> r = by.get(transport);
                System.out.printf("%6d %-4s %s%n", count, transport, r);
            }
            Map<String, String> rdma = by.get("rdma");
            Map<String, String> tcp = by.get("tcp");
            if (!rdma.containsKey("failed") && !twoJvms) {
                rssByCount.put(count, Long.parseLong(rdma.get("rssMB")));
            }
            if (rdma.containsKey("failed") || tcp.containsKey("failed")) {
                summary.append(String.format(" %d: rdma-actors %s, tcp %s;", count, rdma, tcp));
                summary.append(targets(count, rdma, tcp));
                continue;
            }
            summary.append(String.format(" %d: rdma-actors threads %s (rdma- %s), RSS %s MB%s, idle CPU %s%%,"
                    + " setup %s/s, shutdown %s ms;", count, rdma.get("threads"), rdma.get("rdmaThreads"),
                    rdma.get("rssMB"), rdma.containsKey("serverRssMB") ? " + server " + rdma.get("serverRssMB") + " MB" : "",
                    rdma.get("idleCpuPct"), rdma.get("setupPerS"), rdma.get("shutdownMs")));
            summary.append(String.format(" tcp threads %s, RSS %s MB, idle CPU %s%%, setup %s/s, shutdown %s ms;",
                    tcp.get("threads"), tcp.get("rssMB"), tcp.get("idleCpuPct"), tcp.get("setupPerS"),
                    tcp.get("shutdownMs")));
            summary.append(targets(count, rdma, tcp));
        }
        if (rssByCount.size() >= 2) {
            // what one more connection costs, apart from what the JVM and the library take at any count
            Map.Entry<Integer, Long> least = rssByCount.firstEntry();
            Map.Entry<Integer, Long> most = rssByCount.lastEntry();
            summary.append(String.format(" per connection (both ends, %d to %d): %.1f KB RSS;", least.getKey(),
                    most.getKey(), (most.getValue() - least.getValue()) * 1024.0 / (most.getKey() - least.getKey())));
        }
        System.out.println(summary);
    }

    /**
     * Issue targets for both ends in one JVM: at 10,000 connections at most 400 MB RSS; at every
     * count a setup rate at least Pekko TCP's.
     */
    private static String targets(int count, Map<String, String> rdma, Map<String, String> tcp) {
        StringBuilder s = new StringBuilder();
        if (count == 10_000 && !rdma.containsKey("failed") && !rdma.containsKey("serverRssMB")) {
            long rss = Long.parseLong(rdma.get("rssMB"));
            s.append(rss <= 400 ? " RSS <= 400 MB;" : " RSS MISSED (target <= 400 MB);");
        }
        if (!tcp.containsKey("failed") && !rdma.containsKey("failed")) {
            double ratio = Double.parseDouble(rdma.get("setupPerS")) / Double.parseDouble(tcp.get("setupPerS"));
            s.append(String.format(" setup %.2fx tcp%s;", ratio, ratio >= 1 ? " (>= 1.0x)" : " MISSED (target >= 1.0x)"));
        }
        return s.toString();
    }

    private static Map<String, String> child(String transport, int count, int idle, boolean twoJvms) throws Exception {
        Process server = null;
        int port = 0;
        try {
            if (twoJvms) {
                server = new ProcessBuilder(BenchSupport.javaBinary(), "-cp", System.getProperty("java.class.path"),
                        "-Xmx2g", EchoSinkPeer.class.getName(), "4096")
                        .redirectError(ProcessBuilder.Redirect.INHERIT).start();
                String[] ports = firstLine(server, "PORTS ").split(" ");
                port = Integer.parseInt(ports[transport.equals("rdma") ? 1 : 3]);
            }
            // two sockets per TCP connection in one JVM: raise the soft limit on open files to the hard one
            List<String> command = new ArrayList<>(List.of("bash", "-c", "ulimit -n $(ulimit -Hn); exec \"$0\" \"$@\"",
                    BenchSupport.javaBinary(), "-cp", System.getProperty("java.class.path"), "-Xmx2g"));
            command.addAll(BenchSupport.settingsForChild());
            command.addAll(List.of(IdleConnections.class.getName(), "--measure=" + transport, "--count=" + count,
                    "--idle=" + idle, "--port=" + port));
            Process p = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            String line = firstLine(p, "RESULT ");
            Map<String, String> result = new LinkedHashMap<>();
            for (String kv : line.substring("RESULT ".length()).split(" ")) {
                String[] parts = kv.split("=");
                result.put(parts[0], parts[1]);
            }
            if (server != null) {
                result.put("serverRssMB", Long.toString(rssKb(server.pid()) / 1024));
            }
            if (!p.waitFor(STEP_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
            return result;
        } finally {
            if (server != null) {
                server.getOutputStream().close();
                if (!server.waitFor(30, TimeUnit.SECONDS)) {
                    server.destroyForcibly();
                }
            }
        }
    }

    private static String firstLine(Process p, String prefix) throws Exception {
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        for (String line; (line = out.readLine()) != null; ) {
            if (line.startsWith(prefix)) {
                return line;
            }
            if (line.startsWith("SUMMARY")) {
                throw new IllegalStateException("the child failed: " + line);
            }
        }
        throw new IllegalStateException("the child ended without a " + prefix.trim() + " line");
    }

    // ------------------------------------------------------------------ the child: one measurement

    private static void measure(String transport, int count, int idle, int remotePort) throws Exception {
        boolean rdma = transport.equals("rdma");
        long files = ((com.sun.management.UnixOperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getMaxFileDescriptorCount();
        long needed = (remotePort == 0 ? 2L : 1L) * count + 500;
        if (!rdma && needed > files) {
            // Pekko IO would log every refused accept, as fast as it can: refuse to start instead
            throw new IllegalStateException(count + " TCP connections need about " + needed
                    + " open files; this process may have " + files);
        }
        ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "idle",
                ConfigFactory.parseString("pekko.loglevel = WARNING").withFallback(ConfigFactory.load()));
        InetSocketAddress server;
        if (remotePort != 0) {
            server = new InetSocketAddress("127.0.0.1", remotePort);
        } else {
            CompletableFuture<InetSocketAddress> bound = new CompletableFuture<>();
            if (rdma) {
                system.systemActorOf(rdmaListener(bound), "listener", org.apache.pekko.actor.typed.Props.empty());
            } else {
                classic(system).systemActorOf(Props.create(TcpListener.class, () -> new TcpListener(bound)), "listener");
            }
            server = bound.get(STEP_SECONDS, TimeUnit.SECONDS);
        }
        long start = System.nanoTime();
        connectAll(system, rdma, server, count);
        double setupSeconds = (System.nanoTime() - start) / 1e9;
        Thread.sleep(2_000); // connect-time work settles before the idle window
        long cpuBefore = processCpuNanos();
        Thread.sleep(idle * 1000L);
        double idleCpu = (processCpuNanos() - cpuBefore) / (idle * 1e9) * 100;
        int threads = Thread.activeCount();
        long rdmaThreads = Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("rdma-") || t.getName().contains("rdma-actors")).count();
        long rss = rssKb(ProcessHandle.current().pid()) / 1024;
        long stopStart = System.nanoTime();
        system.terminate();
        system.getWhenTerminated().toCompletableFuture().get(STEP_SECONDS, TimeUnit.SECONDS);
        long shutdownMs = (System.nanoTime() - stopStart) / 1_000_000;
        System.out.printf("RESULT threads=%d rdmaThreads=%d rssMB=%d idleCpuPct=%.2f setupPerS=%.0f shutdownMs=%d%n",
                threads, rdmaThreads, rss, idleCpu, count / setupSeconds, shutdownMs);
    }

    private static ExtendedActorSystem classic(ActorSystem<?> system) {
        return (ExtendedActorSystem) system.classicSystem();
    }

    /** Connects {@code count} clients, at most IN_FLIGHT at a time, and returns once all are connected. */
    private static void connectAll(ActorSystem<Void> system, boolean rdma, InetSocketAddress server, int count)
            throws Exception {
        CompletableFuture<Void> all = new CompletableFuture<>();
        AtomicInteger started = new AtomicInteger();
        AtomicInteger connected = new AtomicInteger();
        Runnable[] next = new Runnable[1];
        next[0] = () -> {
            int i = started.getAndIncrement();
            if (i >= count) {
                return;
            }
            Runnable onConnected = () -> {
                if (connected.incrementAndGet() == count) {
                    all.complete(null);
                } else {
                    next[0].run();
                }
            };
            if (rdma) {
                system.systemActorOf(rdmaClient(server, onConnected, all), "client-" + i,
                        org.apache.pekko.actor.typed.Props.empty());
            } else {
                classic(system).systemActorOf(Props.create(TcpClient.class, () -> new TcpClient(server, onConnected,
                        all)), "client-" + i);
            }
        };
        for (int i = 0; i < Math.min(IN_FLIGHT, count); i++) {
            next[0].run();
        }
        all.get(SETUP_SECONDS, TimeUnit.SECONDS);
    }

    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    static long rssKb(long pid) throws Exception {
        for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        return -1;
    }

    // ------------------------------------------------------------------ rdma-actors ends

    private static Behavior<RdmaProtocol.ListenerEvent> rdmaListener(CompletableFuture<InetSocketAddress> bound) {
        return Behaviors.setup(ctx -> {
            Rdma.get(ctx.getSystem()).manager().tell(new RdmaProtocol.Listen(new InetSocketAddress("127.0.0.1", 0),
                    ctx.getSelf(), IN_FLIGHT * 2));
            ActorRef<RdmaProtocol.ConnectionEvent> idle = ctx.spawn(Behaviors.ignore(), "idle");
            return Behaviors.receive(RdmaProtocol.ListenerEvent.class)
                    .onMessage(RdmaProtocol.Listening.class, l -> {
                        bound.complete(l.localAddress());
                        return Behaviors.same();
                    })
                    .onMessage(RdmaProtocol.ConnectionRequested.class, r -> {
                        r.connection().tell(new RdmaProtocol.Accept(idle, null));
                        return Behaviors.same();
                    })
                    .onMessage(RdmaProtocol.CommandFailed.class, f -> {
                        bound.completeExceptionally(f.cause());
                        return Behaviors.same();
                    })
                    .onMessage(RdmaProtocol.ListenerEvent.class, e -> Behaviors.same())
                    .build();
        });
    }

    private static Behavior<RdmaProtocol.ConnectionEvent> rdmaClient(InetSocketAddress server, Runnable onConnected,
                                                                    CompletableFuture<Void> all) {
        return Behaviors.setup(ctx -> {
            Rdma.get(ctx.getSystem()).manager().tell(RdmaProtocol.Connect.to(server, ctx.getSelf()));
            return Behaviors.receive(RdmaProtocol.ConnectionEvent.class)
                    .onMessage(RdmaProtocol.Connected.class, c -> {
                        onConnected.run();
                        return Behaviors.same();
                    })
                    .onMessage(RdmaProtocol.ConnectFailed.class, f -> {
                        all.completeExceptionally(new IllegalStateException("connect failed: " + f.reason()));
                        return Behaviors.stopped();
                    })
                    .onMessage(RdmaProtocol.ConnectionEvent.class, e -> Behaviors.same())
                    .build();
        });
    }

    // ------------------------------------------------------------------ Pekko IO TCP ends

    /** Binds, registers every accepted connection with itself, and ignores what they send. */
    static final class TcpListener extends AbstractActor {
        private final CompletableFuture<InetSocketAddress> bound;

        TcpListener(CompletableFuture<InetSocketAddress> bound) {
            this.bound = bound;
        }

        @Override
        public void preStart() {
            Tcp.get(getContext().getSystem()).manager().tell(
                    TcpMessage.bind(getSelf(), new InetSocketAddress("127.0.0.1", 0), IN_FLIGHT * 2), getSelf());
        }

        @Override
        public Receive createReceive() {
            return receiveBuilder()
                    .match(Tcp.Bound.class, b -> bound.complete(b.localAddress()))
                    .match(Tcp.Connected.class, c -> getSender().tell(TcpMessage.register(getSelf()), getSelf()))
                    .match(Tcp.CommandFailed.class, f -> bound.completeExceptionally(
                            new IllegalStateException("bind failed: " + f)))
                    .matchAny(m -> { })
                    .build();
        }
    }

    static final class TcpClient extends AbstractActor {
        private final InetSocketAddress server;
        private final Runnable onConnected;
        private final CompletableFuture<Void> all;

        TcpClient(InetSocketAddress server, Runnable onConnected, CompletableFuture<Void> all) {
            this.server = server;
            this.onConnected = onConnected;
            this.all = all;
        }

        @Override
        public void preStart() {
            Tcp.get(getContext().getSystem()).manager().tell(TcpMessage.connect(server), getSelf());
        }

        @Override
        public Receive createReceive() {
            return receiveBuilder()
                    .match(Tcp.Connected.class, c -> {
                        getSender().tell(TcpMessage.register(getSelf()), getSelf());
                        onConnected.run();
                    })
                    .match(Tcp.CommandFailed.class, f -> all.completeExceptionally(
                            new IllegalStateException("connect failed: " + f)))
                    .matchAny(m -> { })
                    .build();
        }
    }
}
