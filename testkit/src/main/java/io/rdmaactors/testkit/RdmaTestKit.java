package io.rdmaactors.testkit;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.rdmaactors.actors.Rdma;
import io.rdmaactors.actors.RdmaProtocol;
import io.rdmaactors.cm.AddressVector;
import io.rdmaactors.cm.CmEventType;
import io.rdmaactors.verbs.CmId;
import io.rdmaactors.verbs.Device;
import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.FaultInjector;
import io.rdmaactors.verbs.QueuePair;
import io.rdmaactors.verbs.ResourceKind;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.FishingOutcomes;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.AskPattern;

/**
 * An ActorTestKit with rdma-actors running on a fresh soft fabric, and what every test of an RDMA
 * service wants: a listener and connected pairs whose handlers are probes, faults aimed at a
 * connection, and the checks that nothing leaked (the resource ledger reads zero) and no
 * framework thread outlives the actor system.
 */
public final class RdmaTestKit implements AutoCloseable {

    /** How long the kit's helpers wait for each step (a Listening, a Connected, a Disconnected). */
    public static final Duration STEP = Duration.ofSeconds(10);

    /** A listener on a free port and the probe that is its handler. */
    public record Listener(TestProbe<RdmaProtocol.ListenerEvent> events, RdmaProtocol.Listening listening) {
        public InetSocketAddress address() {
            return listening.localAddress();
        }
    }

    /**
     * Both ends of an established connection: each end's connection (where its commands go), the
     * probe that is its handler, and the Connected that handler was told.
     */
    public record Pair(ActorRef<RdmaProtocol.ConnectionCommand> client,
                       TestProbe<RdmaProtocol.ConnectionEvent> clientEvents,
                       ActorRef<RdmaProtocol.ConnectionCommand> server,
                       TestProbe<RdmaProtocol.ConnectionEvent> serverEvents,
                       RdmaProtocol.Connected clientConnected, RdmaProtocol.Connected serverConnected) {
    }

    private static final AtomicInteger KITS = new AtomicInteger();

    private final ActorTestKit testKit;
    /** The manager's fabric as last asked: a restarted manager opens a new one. */
    private volatile Fabric fabric;
    /** What the framework itself holds while it runs: the manager's CM event channel. */
    private final Map<ResourceKind, Long> baseline;

    private RdmaTestKit(ActorTestKit testKit) {
        this.testKit = testKit;
        this.baseline = fabric().ledger().snapshot();
    }

    /**
     * A test kit whose configuration is {@code config} over the defaults (e.g. queue depths). Its
     * actor system has a name of its own, as do the threads rdma-actors starts for it, so kits
     * may run side by side in one JVM and each checks only its own threads and fabric.
     */
    public static RdmaTestKit create(String config) {
        Config merged = ConfigFactory.parseString(config).withFallback(ConfigFactory.load());
        return new RdmaTestKit(ActorTestKit.create("RdmaTestKit-" + KITS.incrementAndGet(), merged));
    }

    public static RdmaTestKit create() {
        return create("");
    }

    public ActorTestKit testKit() {
        return testKit;
    }

    public ActorRef<RdmaProtocol.ManagerCommand> manager() {
        return Rdma.get(testKit.system()).manager();
    }

    /** The fabric the manager runs on now, asked each time, so it follows a manager restart. */
    public Fabric fabric() {
        try {
            fabric = AskPattern.<RdmaProtocol.ManagerCommand, Fabric>ask(manager(), RdmaProtocol.GetFabric::new, STEP,
                    testKit.scheduler()).toCompletableFuture().get(STEP.toMillis(), TimeUnit.MILLISECONDS);
            return fabric;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        } catch (ExecutionException | TimeoutException e) {
            throw new AssertionError("the manager did not name its fabric within " + STEP, e);
        }
    }

    /**
     * Crashes the manager as an internal error would: it restarts, and every listener, connection
     * and multicast membership ends, each handler hearing its end.
     */
    public void crashManager() {
        manager().tell(new RdmaProtocol.CrashManager("RdmaTestKit.crashManager"));
    }

    /** Crashes the manager and returns once the restarted one serves, on a fabric of its own. */
    public Fabric restartManager() {
        Fabric before = fabric();
        crashManager();
        long deadline = System.nanoTime() + STEP.toNanos();
        Fabric after = fabric();
        while (after == before) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the manager did not restart within " + STEP);
            }
            sleep(10);
            after = fabric();
        }
        return after;
    }

    /**
     * Where tests listen and connect: 127.0.0.1 on the soft fabric; on a real one the device's own
     * address, given as the system property {@code rdma-actors.test.address} (loopback does not route
     * over RoCE).
     */
    public InetSocketAddress address(int port) {
        return new InetSocketAddress(System.getProperty("rdma-actors.test.address", "127.0.0.1"), port);
    }

    /** Fault injection on the fabric: cut ports, kill peers, drop connections, remove devices. */
    public FaultInjector faults() {
        Fabric current = fabric();
        return current.faults().orElseThrow(() -> new IllegalStateException(
                "the " + current.provider() + " fabric has no fault injection"));
    }

    /**
     * Kills the peer of the connection this {@code Connected} told of, as SIGKILL kills a process:
     * this side hears Disconnected(ErrorClosed(PeerFailed)) and every outstanding command fails;
     * the peer's side hears nothing, as a dead process would not.
     */
    public void killPeer(RdmaProtocol.Connected connection) {
        faults().killPeer(cmId(connection));
    }

    /** From now on the connection loses everything it carries, both ways: requests time out in error. */
    public void dropConnection(RdmaProtocol.Connected connection) {
        faults().dropConnection(cmId(connection));
    }

    /** The connection's QP as the fabric holds it, to check what the actors made of it ({@code query()}). */
    public QueuePair queuePair(RdmaProtocol.Connected connection) {
        return cmId(connection).queuePair();
    }

    /** The connection's next post fails with {@code errno}, as a device would refuse it. */
    public void failNextPost(RdmaProtocol.Connected connection, int errno) {
        faults().failNextPost(cmId(connection).queuePair(), errno);
    }

    /**
     * Cuts the device port that owns {@code address} (a Listening's or a Connected's local
     * address, say): what it carries is lost until {@link #restorePort}, and a connection with an
     * alternate path migrates.
     */
    public void cutPort(InetSocketAddress address) {
        DevicePort p = portOf(address);
        faults().cutPort(p.device(), p.port());
    }

    public void restorePort(InetSocketAddress address) {
        DevicePort p = portOf(address);
        faults().restorePort(p.device(), p.port());
    }

    /** Removes the device that owns {@code address}, as a hot unplug: everything on it ends in error. */
    public void removeDevice(InetSocketAddress address) {
        faults().removeDevice(portOf(address).device());
    }

    /**
     * The next CM event of {@code type} the manager hears comes {@code delay} late: a slow or
     * lossy CM path, as a connect timeout or a late request meets it.
     */
    public void delayNextCmEvent(CmEventType type, Duration delay) {
        faults().delayNextEvent(type, delay);
    }

    private record DevicePort(Device device, int port) {
    }

    /** The port whose GID 0 is {@code address}'s IPv4-mapped GID, as RoCE and the soft fabric number them. */
    private DevicePort portOf(InetSocketAddress address) {
        byte[] gid = AddressVector.ipv4MappedGid(address.getAddress());
        for (Device device : fabric().devices()) {
            for (int p = 1; p <= device.query().physicalPortCount(); p++) {
                if (Arrays.equals(gid, device.queryPort(p).gid(0))) {
                    return new DevicePort(device, p);
                }
            }
        }
        throw new IllegalArgumentException("no device port owns " + address.getAddress().getHostAddress());
    }

    private CmId cmId(RdmaProtocol.Connected connection) {
        return faults().connection(connection.local(), connection.remote()).orElseThrow(() ->
                new IllegalArgumentException("no live connection between " + connection.local() + " and "
                        + connection.remote()));
    }

    public <T> TestProbe<T> probe() {
        return testKit.createTestProbe();
    }

    /** Listens on a free port of {@link #address}, a probe for its handler. */
    public Listener listen(int backlog) {
        return listen(backlog, RdmaProtocol.ConnectionOptions.none());
    }

    /** As {@link #listen(int)}, its connections set up with {@code options}. */
    public Listener listen(int backlog, RdmaProtocol.ConnectionOptions options) {
        TestProbe<RdmaProtocol.ListenerEvent> events = probe();
        manager().tell(new RdmaProtocol.Listen(address(0), events.getRef(), backlog).withOptions(options));
        return new Listener(events, events.expectMessageClass(RdmaProtocol.Listening.class, STEP));
    }

    /** Connects a client to {@code listener} and accepts it: both handlers are probes that heard Connected. */
    public Pair connect(Listener listener) {
        return connect(listener, new byte[0], new byte[0]);
    }

    /** As {@link #connect(Listener)}, offering {@code clientData} with the Connect and {@code serverData} with the Accept. */
    public Pair connect(Listener listener, byte[] clientData, byte[] serverData) {
        return connect(listener, clientData, serverData, RdmaProtocol.ConnectionOptions.none());
    }

    /** As {@link #connect(Listener)}, the client's end set up with {@code options}. */
    public Pair connect(Listener listener, RdmaProtocol.ConnectionOptions options) {
        return connect(listener, new byte[0], new byte[0], options);
    }

    private Pair connect(Listener listener, byte[] clientData, byte[] serverData,
                         RdmaProtocol.ConnectionOptions options) {
        TestProbe<RdmaProtocol.ConnectionEvent> clientEvents = probe();
        manager().tell(RdmaProtocol.Connect.to(listener.address(), clientEvents.getRef()).withPrivateData(clientData)
                .withTimeout(STEP).withOptions(options));
        RdmaProtocol.ConnectionRequested request;
        try {
            request = listener.events().expectMessageClass(RdmaProtocol.ConnectionRequested.class, STEP);
        } catch (AssertionError none) {
            throw new AssertionError("no connection request reached the listener at " + listener.address() + " within "
                    + STEP + "; the client heard " + firstHeard(clientEvents), none);
        }
        TestProbe<RdmaProtocol.ConnectionEvent> serverEvents = probe();
        request.connection().tell(new RdmaProtocol.Accept(serverEvents.getRef(), serverData));
        RdmaProtocol.Connected client = clientEvents.expectMessageClass(RdmaProtocol.Connected.class, STEP);
        RdmaProtocol.Connected server = serverEvents.expectMessageClass(RdmaProtocol.Connected.class, STEP);
        return new Pair(client.connection(), clientEvents, server.connection(), serverEvents, client, server);
    }

    /** Closes a pair from the client's end and waits until both ends heard Disconnected. */
    public void close(Pair pair) {
        pair.client().tell(new RdmaProtocol.Close());
        awaitDisconnected(pair.clientEvents());
        awaitDisconnected(pair.serverEvents());
    }

    /** Stops listening and waits for Unbound, skipping other events. */
    public void unbind(Listener listener) {
        listener.listening().listener().tell(new RdmaProtocol.Unbind());
        listener.events().fishForMessage(STEP, e -> e instanceof RdmaProtocol.Unbound
                ? FishingOutcomes.complete() : FishingOutcomes.continueAndIgnore());
    }

    /** Skips other events until the connection's Disconnected, and returns it. */
    public static RdmaProtocol.Disconnected awaitDisconnected(TestProbe<RdmaProtocol.ConnectionEvent> events) {
        List<RdmaProtocol.ConnectionEvent> seen = events.fishForMessage(STEP, e -> e instanceof RdmaProtocol.Disconnected
                ? FishingOutcomes.complete() : FishingOutcomes.continueAndIgnore());
        return (RdmaProtocol.Disconnected) seen.get(seen.size() - 1);
    }

    /**
     * Waits until every resource that connections and listeners took was released, so the ledger
     * holds only what the framework itself runs on; fails naming what is still live beyond that.
     */
    public void awaitNoLeaks(Duration within) {
        long deadline = System.nanoTime() + within.toNanos();
        Fabric current = fabric();
        while (!current.ledger().snapshot().equals(baseline)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("still live after " + within + ", beyond what rdma-actors itself holds: "
                        + leftovers(current.ledger().snapshot())
                        + " (a listener not unbound, a connection not closed, a multicast group not left?)");
            }
            sleep(10);
        }
    }

    /** What {@code live} holds beyond the framework's own baseline, by kind. */
    private Map<ResourceKind, Long> leftovers(Map<ResourceKind, Long> live) {
        Map<ResourceKind, Long> beyond = new java.util.EnumMap<>(ResourceKind.class);
        for (ResourceKind kind : ResourceKind.values()) {
            long n = live.getOrDefault(kind, 0L) - baseline.getOrDefault(kind, 0L);
            if (n != 0) {
                beyond.put(kind, n);
            }
        }
        return beyond;
    }

    private static String firstHeard(TestProbe<?> events) {
        try {
            return String.valueOf(events.receiveMessage(Duration.ofMillis(1)));
        } catch (AssertionError nothing) {
            return "nothing";
        }
    }

    /** Shuts the actor system down and fails if an rdma-actors thread survives it. */
    @Override
    public void close() {
        Fabric last = fabric;
        testKit.shutdownTestKit();
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        List<String> alive = threads();
        while (!alive.isEmpty() && System.nanoTime() < deadline) {
            sleep(20);
            alive = threads();
        }
        if (!alive.isEmpty()) {
            throw new AssertionError("rdma-actors threads outlived the actor system: " + alive);
        }
        if (last.ledger().total() != 0) {
            throw new AssertionError("resources outlived the actor system: " + last.ledger());
        }
    }

    /** Live threads that rdma-actors started for this kit: pumps, pollers, the fabric's I/O and timer. */
    public List<String> threads() {
        String prefix = "rdma-" + testKit.system().name() + "-";
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
                .filter(n -> n.startsWith(prefix)).sorted().collect(Collectors.toList());
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }
}
