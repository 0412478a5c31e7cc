package io.rdmaactors.testkit.chaos;

import io.rdmaactors.actors.RdmaProtocol;
import io.rdmaactors.testkit.RdmaTestKit;
import io.rdmaactors.verbs.VerbsException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * A chaos run: many connections streaming Sends, Writes, Reads and atomics with a token each
 * while a seeded schedule kills peers, drops connections, fails posts, aborts from both ends,
 * crashes handlers and restarts the manager; clients reconnect. It checks what the library
 * promises: every request answered exactly once, one ending per connection attempt, every byte
 * intact, no stall. The same seed plays the same schedule (the machine's timing still varies).
 */
public final class ChaosRun {

    /**
     * @param seed            drives the schedule and the payloads; print it to replay a failure
     * @param connections     client connections kept up at once
     * @param duration        how long faults are injected
     * @param faultsPerSecond how often a fault hits a random connection
     * @param managerRestart  whether the manager is restarted once, halfway
     */
    public record Settings(long seed, int connections, Duration duration, double faultsPerSecond,
                           boolean managerRestart) {
    }

    /** What a run counted; {@link #violations()} says which promise broke. */
    public record Report(Settings settings, long attempts, long requests, long answered, long failed, long lost,
                         long duplicated, long corrupt, long abandoned, Map<String, Long> unended, long doubleEndings, long stalls,
                         long bytesVerified, long clientFailures, Map<String, Integer> faults) {

        public List<String> violations() {
            List<String> v = new ArrayList<>();
            check(v, lost == 0, lost + " requests never answered");
            check(v, duplicated == 0, duplicated + " answers to a request already answered");
            check(v, corrupt == 0, corrupt + " payloads or atomic results altered");
            check(v, unended.isEmpty(), unended + " connection attempts (by how far they got) that never heard their end");
            check(v, doubleEndings == 0, doubleEndings + " connection attempts that ended twice");
            check(v, clientFailures == 0, clientFailures + " chaos clients failed on their own (see the log)");
            check(v, stalls == 0, stalls + " stalls of " + STALL.toSeconds() + " s with no answer");
            check(v, answered > 0 && faults.values().stream().mapToInt(Integer::intValue).sum() > 0,
                    "nothing was tried: no answer or no fault");
            return v;
        }

        private static void check(List<String> violations, boolean holds, String otherwise) {
            if (!holds) {
                violations.add(otherwise);
            }
        }

        @Override
        public String toString() {
            return String.format("chaos seed %d: %d connections for %s, %d attempts; %d requests, %d answered once "
                            + "(%d of them failed), %d lost, %d duplicated, %d corrupt, %d abandoned with crashed handlers; "
                            + "attempts never ended %s, %d ended twice; %d stalls; %.1f MB verified; faults %s",
                    settings.seed(), settings.connections(), settings.duration(), attempts, requests, answered, failed,
                    lost, duplicated, corrupt, abandoned, unended, doubleEndings, stalls, bytesVerified / 1e6, faults);
        }
    }

    /** A client slot, as the run sees it: its current actor and connection. */
    static final class Slot {
        volatile ActorRef<Object> actor;
        volatile RdmaProtocol.Connected connection;
        volatile boolean crashed;
        volatile boolean done;

        void connected(RdmaProtocol.Connected c) {
            connection = c;
        }

        void crashed() {
            connection = null;
            crashed = true;
        }

        void done() {
            done = true;
        }
    }

    static final Duration STALL = Duration.ofSeconds(10);
    private static final String[] FAULTS = {"kill-peer", "drop-connection", "fail-next-post", "client-abort",
            "server-abort", "handler-crash"};

    /**
     * A chaos server: a listener whose every connection gets an agent that exports a region for
     * the client's Writes, Reads and atomics and echoes its Sends; for clients in other processes.
     */
    public static final class Server {
        private final RdmaTestKit kit;
        private final AtomicReference<RdmaProtocol.Listening> listening = new AtomicReference<>();
        private final Map<String, RdmaProtocol.Connected> connections = new ConcurrentHashMap<>();

        private Server(RdmaTestKit kit) {
            this.kit = kit;
        }

        /** Listens on {@code port} of the kit's address (0: any free one) and serves. */
        public static Server start(RdmaTestKit kit, int port, String name) throws InterruptedException {
            Server server = new Server(kit);
            ActorRef<RdmaProtocol.ListenerEvent> handler = kit.testKit().spawn(
                    ChaosListener.create(server.listening, server.connections), name);
            kit.manager().tell(new RdmaProtocol.Listen(kit.address(port), handler, 1024));
            await(() -> server.listening.get() != null, RdmaTestKit.STEP);
            if (server.listening.get() == null) {
                throw new IllegalStateException("the chaos listener did not bind " + kit.address(port));
            }
            return server;
        }

        public InetSocketAddress address() {
            return listening.get().localAddress();
        }

        /** Connections it serves now. */
        public int connections() {
            return connections.size();
        }

        public void unbind() {
            listening.get().listener().tell(new RdmaProtocol.Unbind());
        }
    }

    private final RdmaTestKit kit;
    private final Settings settings;
    private final Random random;
    /** Where clients connect: this run's own server, or a server in another process. */
    private final Supplier<InetSocketAddress> target;
    /** Whether the server is this run's own: then faults hit its side too, and the manager may restart. */
    private final boolean local;
    private final ChaosLedger ledger = new ChaosLedger();
    private Server server;
    private final List<Slot> slots = new ArrayList<>();
    private int spawned;

    private ChaosRun(RdmaTestKit kit, Settings settings, Supplier<InetSocketAddress> target) {
        this.kit = kit;
        this.settings = settings;
        this.random = new Random(settings.seed());
        this.local = target == null;
        this.target = local ? () -> server.address() : target;
    }

    /** Runs the chaos on the kit's fabric, server and clients, which must inject faults (the soft fabric does). */
    public static Report run(RdmaTestKit kit, Settings settings) throws InterruptedException {
        return new ChaosRun(kit, settings, null).run();
    }

    /**
     * Runs only the clients, against a {@link Server} of another process at what {@code server}
     * says now (it may move when that process is replaced); faults hit this side only and the
     * manager is not restarted.
     */
    public static Report runAgainst(RdmaTestKit kit, Settings settings, Supplier<InetSocketAddress> server)
            throws InterruptedException {
        return new ChaosRun(kit, new Settings(settings.seed(), settings.connections(), settings.duration(),
                settings.faultsPerSecond(), false), server).run();
    }

    private Report run() throws InterruptedException {
        if (local) {
            listen();
        }
        for (int i = 0; i < settings.connections(); i++) {
            Slot slot = new Slot();
            slots.add(slot);
            spawn(slot);
        }
        long stalls = 0;
        long start = System.nanoTime();
        long end = start + settings.duration().toNanos();
        boolean restarted = !settings.managerRestart();
        long lastAnswered = -1;
        long lastProgress = start;
        long pause = (long) (1000 / settings.faultsPerSecond());
        while (System.nanoTime() < end) {
            Thread.sleep(pause);
            for (Slot slot : slots) {
                if (slot.crashed) {
                    slot.crashed = false;
                    spawn(slot);
                }
            }
            if (!restarted && System.nanoTime() > start + settings.duration().toNanos() / 2) {
                restarted = true;
                restartManager();
            } else {
                inject(slots.get(random.nextInt(slots.size())));
            }
            long now = System.nanoTime();
            long answered = ledger.answered.get();
            if (answered != lastAnswered) {
                lastAnswered = answered;
                lastProgress = now;
            } else if (now - lastProgress > STALL.toNanos()) {
                stalls++;
                lastProgress = now;
            }
        }
        for (Slot slot : slots) {
            slot.actor.tell(new ChaosClient.Stop());
        }
        await(() -> slots.stream().allMatch(s -> s.done || s.crashed), Duration.ofSeconds(60));
        await(() -> ledger.outstanding() == 0, Duration.ofSeconds(20));
        if (local) {
            server.unbind();
        }
        return new Report(settings, ledger.attempts(), ledger.issued.get(), ledger.answered.get(), ledger.failed.get(),
                ledger.outstanding(), ledger.duplicated.get(), ledger.corrupt.get(), ledger.abandoned.get(),
                ledger.unended(), ledger.doubleEndings.get(), stalls, ledger.bytesVerified.get(),
                ledger.clientFailures.get(), ledger.faults());
    }

    private void listen() throws InterruptedException {
        server = Server.start(kit, 0, "chaos-listener-" + ++spawned);
    }

    private void spawn(Slot slot) {
        slot.actor = kit.testKit().spawn(ChaosClient.create(ledger, slot, kit.manager(),
                target, random.nextLong()), "chaos-client-" + ++spawned);
    }

    /** A manager restart ends every connection and the listener; a new listener takes over. */
    private void restartManager() throws InterruptedException {
        ledger.fault("manager-restart");
        kit.crashManager();
        Thread.sleep(200);
        listen();
    }

    private void inject(Slot slot) {
        RdmaProtocol.Connected c = slot.connection;
        String kind = FAULTS[random.nextInt(FAULTS.length)];
        if (c == null && !kind.equals("handler-crash") && !kind.equals("server-abort")) {
            return; // the slot is between two connections
        }
        try {
            switch (kind) {
                case "kill-peer" -> kit.killPeer(c);
                case "drop-connection" -> kit.dropConnection(c);
                case "fail-next-post" -> kit.failNextPost(c, VerbsException.ENOMEM);
                case "client-abort" -> c.connection().tell(new RdmaProtocol.Abort());
                case "server-abort" -> {
                    List<RdmaProtocol.Connected> live = local ? new ArrayList<>(server.connections.values()) : List.of();
                    if (live.isEmpty()) {
                        return;
                    }
                    live.get(random.nextInt(live.size())).connection().tell(new RdmaProtocol.Abort());
                }
                default -> slot.actor.tell(new ChaosClient.Crash());
            }
            ledger.fault(kind);
        } catch (IllegalArgumentException | VerbsException missed) {
            // the connection ended between the pick and the fault: nothing was injected
        }
    }

    private static void await(BooleanSupplier condition, Duration within)
            throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        while (!condition.getAsBoolean() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
    }
}
