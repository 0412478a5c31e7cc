package io.rdmaactors.bench;

import io.rdmaactors.testkit.RdmaTestKit;
import io.rdmaactors.testkit.chaos.ChaosRun;
import io.rdmaactors.verbs.ResourceKind;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

/**
 * The chaos suite across processes on the soft fabric, with kill -9 where {@link ChaosSoak} has
 * faults inside one JVM. First the clients die: each cycle starts client processes running
 * {@link ChaosRun#runAgainst} against a server in this JVM, kills them with SIGKILL mid-traffic,
 * and checks that the server's connections all end and that its rdma-actors threads and resource
 * ledger come back to the same level every cycle. Then the server dies: clients in this JVM run
 * against a server process that is killed with SIGKILL and replaced on the same port, again and
 * again, and every promise of the chaos run must hold for them (every request answered once, one
 * ending per connection, data intact, no stall). Exits 1 if anything broke.
 */
public final class ChaosAcrossProcesses {

    private static final String USAGE = "usage: ChaosAcrossProcesses [--cycles 50] [--clients 2] [--connections 20]"
            + " [--server-kills 10] [--seed N]";
    private static final Duration STEP = Duration.ofSeconds(20);

    private ChaosAcrossProcesses() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 2 && args[0].equals("--serve")) {
            serve(Integer.parseInt(args[1]));
            return;
        }
        if (args.length == 3 && args[0].equals("--client-of")) {
            client(Integer.parseInt(args[1]), Integer.parseInt(args[2]));
            return;
        }
        BenchSupport.Options options = new BenchSupport.Options(args, USAGE, "cycles", "clients", "connections",
                "server-kills", "seed");
        int cycles = options.integer("cycles", 50, 1);
        int clients = options.integer("clients", 2, 1);
        int connections = options.integer("connections", 20, 1);
        int serverKills = options.integer("server-kills", 10, 1);
        long seed = Long.parseLong(options.string("seed", Long.toString(System.nanoTime())));
        BenchSupport.runOrReport("ChaosAcrossProcesses", () -> {
            Random random = new Random(seed);
            String clientsDied = killClients(cycles, clients, connections, random);
            String serverDied = killServers(serverKills, connections, random, seed);
            System.out.println("SUMMARY ChaosAcrossProcesses: " + clientsDied + "; " + serverDied + " (seed " + seed
                    + ")");
        });
    }

    /** Client processes killed with SIGKILL, cycle after cycle, against a server in this JVM. */
    private static String killClients(int cycles, int clients, int connections, Random random) throws Exception {
        try (RdmaTestKit kit = RdmaTestKit.create()) {
            ChaosRun.Server server = ChaosRun.Server.start(kit, 0, "chaos-server");
            // what the server holds with no connection: its listener's id, its device's shared receive queue
            Map<ResourceKind, Long> listening = settled(kit);
            int port = server.address().getPort();
            List<String> firstThreads = null;
            Map<ResourceKind, Long> firstLedger = null;
            for (int cycle = 1; cycle <= cycles; cycle++) {
                List<Process> children = new ArrayList<>();
                for (int c = 0; c < clients; c++) {
                    children.add(start("--client-of", Integer.toString(port), Integer.toString(connections)));
                }
                await("cycle " + cycle + ": the clients connected", () -> server.connections() >= clients * connections);
                Thread.sleep(300 + random.nextInt(700)); // mid-traffic
                for (Process p : children) {
                    p.destroyForcibly(); // SIGKILL
                }
                for (Process p : children) {
                    p.waitFor(STEP.toSeconds(), TimeUnit.SECONDS);
                }
                await("cycle " + cycle + ": every connection of the killed clients ended", () -> server.connections() == 0);
                // one the client was still setting up when it died is freed at its accept's timeout
                await("cycle " + cycle + ": the server freed what its connections held",
                        () -> noConnectionHeld(kit.fabric().ledger().snapshot(), listening));
                Map<ResourceKind, Long> ledger = settled(kit);
                List<String> threads = kit.threads();
                if (firstLedger == null) {
                    firstLedger = ledger;
                    firstThreads = threads;
                } else if (!ledger.equals(firstLedger) || threads.size() != firstThreads.size()) {
                    throw new AssertionError("cycle " + cycle + ": the server holds " + ledger + " and " + threads.size()
                            + " threads; after cycle 1 it held " + firstLedger + " and " + firstThreads.size());
                }
                System.out.printf("cycle %d: %d clients of %d connections killed; server ledger %s, %d threads%n",
                        cycle, clients, connections, ledger, threads.size());
            }
            server.unbind();
            kit.awaitNoLeaks(STEP);
            return cycles + " cycles of " + clients + " client processes killed mid-traffic: the server's ledger stayed "
                    + firstLedger + " and its threads " + firstThreads.size();
        }
    }

    /** What a connection holds on the server. */
    private static final Set<ResourceKind> CONNECTIONS_HOLD = EnumSet.of(ResourceKind.CM_ID, ResourceKind.QUEUE_PAIR,
            ResourceKind.COMPLETION_QUEUE, ResourceKind.PROTECTION_DOMAIN, ResourceKind.MEMORY_REGION,
            ResourceKind.MEMORY_WINDOW, ResourceKind.LINK);

    /**
     * Nothing of a connection in the ledger: of no kind a connection holds more than the server held
     * {@code listening}, with none (the per-device shared receive queue's domain and region stay).
     */
    private static boolean noConnectionHeld(Map<ResourceKind, Long> ledger, Map<ResourceKind, Long> listening) {
        return CONNECTIONS_HOLD.stream().allMatch(kind -> ledger.getOrDefault(kind, 0L) <= listening.getOrDefault(kind, 0L));
    }

    /** The ledger once it stopped changing: connections end a little after their ids report it. */
    private static Map<ResourceKind, Long> settled(RdmaTestKit kit) throws InterruptedException {
        Map<ResourceKind, Long> before = kit.fabric().ledger().snapshot();
        while (true) {
            Thread.sleep(200);
            Map<ResourceKind, Long> now = kit.fabric().ledger().snapshot();
            if (now.equals(before)) {
                return now;
            }
            before = now;
        }
    }

    /** A server process killed with SIGKILL and replaced on its port, under clients in this JVM. */
    private static String killServers(int kills, int connections, Random random, long seed) throws Exception {
        Process first = start("--serve", "0");
        int port = readPort(first);
        AtomicReference<Process> server = new AtomicReference<>(first);
        try (RdmaTestKit kit = RdmaTestKit.create()) {
            InetSocketAddress address = kit.address(port);
            Duration duration = Duration.ofSeconds(2L * kills + 2);
            CompletableFuture<ChaosRun.Report> run = CompletableFuture.supplyAsync(() -> {
                try {
                    return ChaosRun.runAgainst(kit, new ChaosRun.Settings(seed, connections, duration, 2, false),
                            () -> address);
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            for (int k = 1; k <= kills; k++) {
                Thread.sleep(1000 + random.nextInt(1000));
                server.get().destroyForcibly().waitFor(STEP.toSeconds(), TimeUnit.SECONDS);
                Process next = start("--serve", Integer.toString(port));
                readPort(next);
                server.set(next);
            }
            ChaosRun.Report report = run.get(duration.toSeconds() + 120, TimeUnit.SECONDS);
            System.out.println("server killed " + kills + " times: " + report);
            if (!report.violations().isEmpty()) {
                throw new AssertionError("with the server killed: " + report.violations());
            }
            kit.awaitNoLeaks(STEP);
            return "server killed " + kills + " times under " + connections + " connections: " + report.requests()
                    + " requests, every one answered once, " + report.attempts() + " connection attempts each ended once";
        } finally {
            server.get().destroyForcibly();
        }
    }

    /** A child JVM of this class; a client's output is dropped, a server's read by {@link #readPort}. */
    private static Process start(String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(BenchSupport.javaBinary(), "-Xmx512m", "-cp",
                System.getProperty("java.class.path"), ChaosAcrossProcesses.class.getName()));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD);
        if (args[0].equals("--client-of")) {
            builder.redirectOutput(ProcessBuilder.Redirect.DISCARD);
        }
        return builder.start();
    }

    /** The port a server process listens on; the rest of its output is drained, so it never blocks on it. */
    private static int readPort(Process p) throws Exception {
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line = out.readLine();
        if (line == null || !line.startsWith("PORT ")) {
            throw new IllegalStateException("the server process said " + line);
        }
        Thread drain = new Thread(() -> {
            try {
                while (out.readLine() != null) {
                    // dropped
                }
            } catch (IOException ended) {
                // the process is gone
            }
        }, "drain-server-output");
        drain.setDaemon(true);
        drain.start();
        return Integer.parseInt(line.substring(5));
    }

    /** A server process: serves until killed. */
    private static void serve(int port) throws Exception {
        RdmaTestKit kit = RdmaTestKit.create();
        ChaosRun.Server server = ChaosRun.Server.start(kit, port, "chaos-server");
        System.out.println("PORT " + server.address().getPort());
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }

    /** A client process: runs chaos clients against the server until killed. */
    private static void client(int port, int connections) throws Exception {
        RdmaTestKit kit = RdmaTestKit.create();
        InetSocketAddress server = kit.address(port);
        ChaosRun.runAgainst(kit, new ChaosRun.Settings(System.nanoTime(), connections, Duration.ofDays(1), 2, false),
                () -> server);
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + STEP.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(what + ": not within " + STEP);
            }
            Thread.sleep(20);
        }
    }
}
