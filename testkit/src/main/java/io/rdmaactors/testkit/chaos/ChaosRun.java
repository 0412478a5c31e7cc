package io.rdmaactors.testkit.chaos;

import io.rdmaactors.actors.RdmaProtocol;
import io.rdmaactors.testkit.RdmaTestKit;
import io.rdmaactors.verbs.VerbsException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
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
                         long duplicated, long corrupt, long abandoned, long unended, long doubleEndings, long stalls,
                         long bytesVerified, Map<String, Integer> faults) {

        public List<String> violations() {
            List<String> v = new ArrayList<>();
            check(v, lost == 0, lost + " requests never answered");
            check(v, duplicated == 0, duplicated + " answers to a request already answered");
            check(v, corrupt == 0, corrupt + " payloads or atomic results altered");
            check(v, unended == 0, unended + " connection attempts that never heard their end");
            check(v, doubleEndings == 0, doubleEndings + " connection attempts that ended twice");
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
                            + "%d attempts never ended, %d ended twice; %d stalls; %.1f MB verified; faults %s",
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

    private final RdmaTestKit kit;
    private final Settings settings;
    private final Random random;
    private final ChaosLedger ledger = new ChaosLedger();
    private final AtomicReference<RdmaProtocol.Listening> listening = new AtomicReference<>();
    private final Map<String, RdmaProtocol.Connected> servers = new ConcurrentHashMap<>();
    private final List<Slot> slots = new ArrayList<>();
    private int spawned;

    private ChaosRun(RdmaTestKit kit, Settings settings) {
        this.kit = kit;
        this.settings = settings;
        this.random = new Random(settings.seed());
    }

    /** Runs the chaos on the kit's fabric, which must inject faults (the soft fabric does). */
    public static Report run(RdmaTestKit kit, Settings settings) throws InterruptedException {
        return new ChaosRun(kit, settings).run();
    }

    private Report run() throws InterruptedException {
        listen();
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
        listening.get().listener().tell(new RdmaProtocol.Unbind());
        return new Report(settings, ledger.attempts(), ledger.issued.get(), ledger.answered.get(), ledger.failed.get(),
                ledger.outstanding(), ledger.duplicated.get(), ledger.corrupt.get(), ledger.abandoned.get(),
                ledger.unended(), ledger.doubleEndings.get(), stalls, ledger.bytesVerified.get(), ledger.faults());
    }

    private void listen() throws InterruptedException {
        RdmaProtocol.Listening before = listening.get();
        ActorRef<RdmaProtocol.ListenerEvent> handler = kit.testKit().spawn(ChaosListener.create(listening, servers),
                "chaos-listener-" + ++spawned);
        kit.manager().tell(new RdmaProtocol.Listen(kit.address(0), handler, 1024));
        await(() -> listening.get() != before, RdmaTestKit.STEP);
        if (listening.get() == before) {
            throw new IllegalStateException("the chaos listener did not bind");
        }
    }

    private void spawn(Slot slot) {
        slot.actor = kit.testKit().spawn(ChaosClient.create(ledger, slot, kit.manager(),
                () -> listening.get().localAddress(), random.nextLong()), "chaos-client-" + ++spawned);
    }

    /** A manager restart ends every connection and the listener; a new listener takes over. */
    private void restartManager() throws InterruptedException {
        ledger.fault("manager-restart");
        kit.manager().tell(new RdmaProtocol.GetFabric(null)); // a null reply-to makes the manager fail
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
                    List<RdmaProtocol.Connected> live = new ArrayList<>(servers.values());
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
