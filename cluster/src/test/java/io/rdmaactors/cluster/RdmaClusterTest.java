package io.rdmaactors.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.rdmaactors.actors.Rdma;
import io.rdmaactors.actors.RdmaProtocol;
import io.rdmaactors.actors.streams.RdmaStreams;
import io.rdmaactors.cluster.RdmaClusterProtocol.PeerConnected;
import io.rdmaactors.cluster.RdmaClusterProtocol.PeerDisconnected;
import io.rdmaactors.cluster.RdmaClusterProtocol.PeerEvent;
import io.rdmaactors.cluster.RdmaClusterProtocol.PeerReceived;
import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.ResourceKind;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Down;
import org.apache.pekko.cluster.typed.Join;
import org.apache.pekko.cluster.typed.Leave;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.BoundedSourceQueue;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.javadsl.Keep;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Members of one cluster, each an actor system of this JVM (Artery on 127.0.0.1, the soft
 * fabric): every pair gets one RDMA connection as they come Up, and loses it when a member leaves,
 * is downed, or comes back on the same address as a new incarnation.
 */
@Timeout(value = 600, unit = TimeUnit.SECONDS)
class RdmaClusterTest {

    /**
     * An upper bound, long enough for members forming a cluster in the emulated Soft-RoCE guest (jna),
     * where the first test's members, starting while the JIT compiles, took 145 s in all.
     */
    private static final Duration WAIT = Duration.ofSeconds(180);
    private final List<ActorTestKit> members = new ArrayList<>();

    /** A member whose failure detector the test holds ({@link PuppetFailureDetector}), named {@code observer}. */
    private static Config config(int port, String observer) {
        return ConfigFactory.parseString("""
                pekko.cluster.failure-detector.implementation-class = "io.rdmaactors.cluster.PuppetFailureDetector"
                pekko.cluster.failure-detector.puppet-observer = "%s"
                pekko.cluster.unreachable-nodes-reaper-interval = 200ms
                """.formatted(observer)).withFallback(ClusterMemberProcess.config(port));
    }

    /** A member: its system, the probe subscribed to its peer events, its address, its failure detector's name. */
    private record Member(ActorTestKit kit, TestProbe<PeerEvent> events, Address address, String observer) {
    }

    private Member start(int port, Address seed) {
        String observer = "member-" + members.size();
        ActorTestKit kit = ActorTestKit.create("members", config(port, observer));
        members.add(kit);
        Cluster cluster = Cluster.get(kit.system());
        cluster.manager().tell(Join.create(seed == null ? cluster.selfMember().address() : seed));
        TestProbe<PeerEvent> events = kit.createTestProbe();
        RdmaCluster.get(kit.system()).subscribe(events.getRef());
        return new Member(kit, events, cluster.selfMember().address(), observer);
    }

    @AfterEach
    void stop() {
        PuppetFailureDetector.CUT.clear();
        // every member is stopped even where one outlasts its shutdown timeout, so the next test starts clean
        RuntimeException failed = null;
        for (ActorTestKit kit : members) {
            try {
                kit.shutdownTestKit();
            } catch (RuntimeException e) {
                if (failed == null) {
                    failed = e;
                } else {
                    failed.addSuppressed(e);
                }
            }
        }
        if (failed != null) {
            throw failed;
        }
    }

    /**
     * Waits for a PeerConnected from each member named; other events are skipped, a PeerConnected
     * from a member not named among them (a third member that lost its connection too may come
     * back first).
     */
    private static void awaitConnected(Member at, Address... others) {
        Set<Address> expected = new HashSet<>(List.of(others));
        Set<Address> connected = new HashSet<>();
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!connected.containsAll(expected) && System.nanoTime() < deadline) {
            PeerEvent e = at.events.receiveMessage(WAIT);
            if (e instanceof PeerConnected c) {
                connected.add(c.member());
            }
        }
        assertTrue(connected.containsAll(expected), at.address + " connected to " + connected + ", not all of "
                + expected);
    }

    private static PeerDisconnected awaitDisconnected(Member at, Address from) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            PeerEvent e = at.events.receiveMessage(WAIT);
            if (e instanceof PeerDisconnected d && d.member().equals(from)) {
                return d;
            }
        }
        throw new AssertionError(at.address + " never lost its connection to " + from);
    }

    /** Waits for {@code text} to arrive; what arrived before it (a message lost to a fault may not) is skipped. */
    private static PeerReceived awaitReceived(Member at, String text) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            if (at.events.receiveMessage(WAIT) instanceof PeerReceived r && r.data().utf8String().equals(text)) {
                return r;
            }
        }
        throw new AssertionError(at.address + " never received " + text);
    }

    private static Fabric fabric(Member m) throws Exception {
        return AskPattern.<RdmaProtocol.ManagerCommand, Fabric>ask(Rdma.get(m.kit.system()).manager(),
                RdmaProtocol.GetFabric::new, WAIT, m.kit.scheduler()).toCompletableFuture().get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }

    /** The QPs this member's fabric holds: one per connection. */
    private static long queuePairs(Member m) throws Exception {
        return fabric(m).ledger().live(ResourceKind.QUEUE_PAIR);
    }

    private static void awaitQueuePairs(Member m, long expected) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (queuePairs(m) != expected && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertEquals(expected, queuePairs(m), m.address + "'s QPs");
    }

    private static void send(Member from, Member to, String text) {
        RdmaCluster.get(from.kit.system()).sendTo(to.address, ByteString.fromString(text));
    }

    private List<Member> threeMembers() {
        Member a = start(0, null);
        Member b = start(0, a.address);
        Member c = start(0, a.address);
        awaitConnected(a, b.address, c.address);
        awaitConnected(b, a.address, c.address);
        awaitConnected(c, a.address, b.address);
        return List.of(a, b, c);
    }

    @Test
    void everyPairOfMembersGetsOneConnectionAndSendsOverIt() throws Exception {
        List<Member> m = threeMembers();
        Member a = m.get(0);
        Member b = m.get(1);
        Member c = m.get(2);
        for (Member each : m) {
            awaitQueuePairs(each, 2);
        }
        send(a, b, "from a");
        assertEquals(a.address, awaitReceived(b, "from a").member());
        send(c, a, "from c");
        assertEquals(c.address, awaitReceived(a, "from c").member());

        RdmaCluster.get(a.kit.system()).sendTo(new Address("pekko", "members", "127.0.0.1", 1),
                ByteString.fromString("to nobody"));
        long deadline = System.nanoTime() + WAIT.toNanos();
        PeerEvent e;
        do {
            e = a.events.receiveMessage(WAIT);
        } while (!(e instanceof RdmaClusterProtocol.SendFailed) && System.nanoTime() < deadline);
        assertInstanceOf(RdmaClusterProtocol.SendFailed.class, e, "a member without a connection");
    }

    @Test
    void aMemberThatLeavesLosesItsConnectionsAndFreesThem() throws Exception {
        List<Member> m = threeMembers();
        Member a = m.get(0);
        Member b = m.get(1);
        Member c = m.get(2);
        Cluster.get(c.kit.system()).manager().tell(Leave.create(c.address));
        awaitDisconnected(a, c.address);
        awaitDisconnected(b, c.address);
        awaitQueuePairs(a, 1);
        awaitQueuePairs(b, 1);
        send(a, b, "still");
        assertEquals(a.address, awaitReceived(b, "still").member(), "the others' connection stays");
    }

    @Test
    void aDownedMemberIsDisconnectedAndARestartOnItsAddressConnectsAgain() throws Exception {
        List<Member> m = threeMembers();
        Member a = m.get(0);
        Member b = m.get(1);
        Member c = m.get(2);
        int port = c.address.getPort().get();
        Cluster.get(a.kit.system()).manager().tell(new Down(c.address));
        awaitDisconnected(a, c.address);
        awaitDisconnected(b, c.address);
        c.kit.system().getWhenTerminated().toCompletableFuture().get(WAIT.toSeconds(), TimeUnit.SECONDS);
        awaitQueuePairs(a, 1);

        Member again = start(port, a.address);
        assertEquals(c.address, again.address, "the same address, a new incarnation");
        awaitConnected(a, again.address);
        awaitConnected(b, again.address);
        awaitConnected(again, a.address, b.address);
        send(again, a, "back");
        assertEquals(again.address, awaitReceived(a, "back").member());
    }

    /**
     * A partition of the RDMA side only: the cluster still sees the member Up and reachable, so
     * the connection that failed is dialed again until the port is back, then carries again.
     */
    @Test
    void aConnectionCutOnTheRdmaSideComesBackWhileTheClusterStillSeesTheMember() throws Exception {
        List<Member> m = threeMembers();
        Member a = m.get(0);
        Member c = m.get(2);
        Fabric cut = fabric(c);
        assumeTrue(cut.faults().isPresent(), "cutting a port needs the soft fabric's fault injection");
        // the tests' address is port 1 of the fabric's first device
        cut.faults().orElseThrow().cutPort(cut.devices().get(0), 1);
        send(a, c, "lost");
        awaitDisconnected(a, c.address);
        assertTrue(Cluster.get(a.kit.system()).state().getUnreachable().isEmpty(), "the cluster sees every member");
        cut.faults().orElseThrow().restorePort(cut.devices().get(0), 1);
        awaitConnected(a, c.address);
        send(a, c, "after");
        assertEquals(a.address, awaitReceived(c, "after").member());
    }

    /**
     * The reverse partition: the cluster sees a member unreachable while the RDMA side is fine.
     * Membership is the authority: the connection ends at once, and comes back when the member is
     * reachable again.
     */
    @Test
    void aMemberTheClusterSeesUnreachableLosesItsConnectionUntilItIsReachableAgain() throws Exception {
        List<Member> m = threeMembers();
        Member a = m.get(0);
        Member c = m.get(2);
        PuppetFailureDetector.CUT.add(PuppetFailureDetector.pair(a.observer, c.address));
        awaitDisconnected(a, c.address);
        awaitDisconnected(c, a.address);
        PuppetFailureDetector.CUT.clear();
        awaitConnected(a, c.address);
        awaitConnected(c, a.address);
        send(c, a, "reachable");
        assertEquals(c.address, awaitReceived(a, "reachable").member());
    }

    private List<Member> twoMembers() {
        Member a = start(0, null);
        Member b = start(0, a.address);
        awaitConnected(a, b.address);
        awaitConnected(b, a.address);
        return List.of(a, b);
    }

    /** Binds {@code channel} on {@code at}, echoing every stream opened to it; the probe hears who opened each. */
    private static TestProbe<Address> echo(Member at, String channel) throws Exception {
        TestProbe<Address> from = at.kit.createTestProbe();
        RdmaCluster.get(at.kit.system()).incomingStreams(channel)
                .to(Sink.foreach(stream -> {
                    from.getRef().tell(stream.member());
                    stream.handleWith(Flow.create(), at.kit.system());
                }))
                .run(at.kit.system()).toCompletableFuture().get(WAIT.toSeconds(), TimeUnit.SECONDS);
        return from;
    }

    @Test
    void aStreamToAMembersChannelCarriesElementsAndEndsWithItsOwnConnection() throws Exception {
        List<Member> m = twoMembers();
        Member a = m.get(0);
        Member b = m.get(1);
        TestProbe<Address> from = echo(b, "echo");
        List<ByteString> sent = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            sent.add(ByteString.fromString("element " + i + "x".repeat(i * 37)));
        }
        List<ByteString> echoed = Source.from(sent)
                .via(RdmaCluster.get(a.kit.system()).streamTo(b.address, "echo"))
                .runWith(Sink.seq(), a.kit.system()).toCompletableFuture().get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertEquals(sent, echoed, "every element back, whole and in order");
        assertEquals(a.address, from.receiveMessage(WAIT), "the member that opened the stream");
        awaitQueuePairs(a, 1);
        awaitQueuePairs(b, 1);
        send(a, b, "the pair's connection stays");
        awaitReceived(b, "the pair's connection stays");
    }

    /**
     * A stream's materialized value and its end come through futures converted from Scala, which
     * run even non-async callbacks on the common pool: on two cores or fewer a new thread per task,
     * three per stream before. Where the common pool has threads of its own this cannot fail; CI's
     * two cores are where it can.
     */
    @Test
    void openingStreamsStartsNoThreadPerStream() throws Exception {
        List<Member> m = twoMembers();
        Member a = m.get(0);
        Member b = m.get(1);
        echo(b, "echo");
        openStream(a, b, 0); // the dispatchers' threads start with the first
        int streams = 30;
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long started = threads.getTotalStartedThreadCount();
        for (int i = 1; i <= streams; i++) {
            openStream(a, b, i);
        }
        long startedByStreams = threads.getTotalStartedThreadCount() - started;
        assertTrue(startedByStreams < streams, startedByStreams + " threads started while " + streams
                + " streams opened and ended");
    }

    /** Streams one element to {@code to}'s echo channel and back, until the stream ends. */
    private static void openStream(Member from, Member to, int n) throws Exception {
        var opened = Source.single(ByteString.fromString("stream " + n))
                .viaMat(RdmaCluster.get(from.kit.system()).streamTo(to.address, "echo"), Keep.right())
                .toMat(Sink.seq(), Keep.both()).run(from.kit.system());
        opened.first().toCompletableFuture().get(WAIT.toSeconds(), TimeUnit.SECONDS);
        opened.second().toCompletableFuture().get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }

    @Test
    void aStreamFailsWithAClearErrorWhereNoChannelOrMemberTakesItAndAChannelHasOneSource() throws Exception {
        List<Member> m = twoMembers();
        Member a = m.get(0);
        Member b = m.get(1);
        RdmaCluster cluster = RdmaCluster.get(a.kit.system());
        ExecutionException noChannel = assertThrows(ExecutionException.class, () -> Source.single(ByteString.fromString("x"))
                .via(cluster.streamTo(b.address, "nobody-listens")).runWith(Sink.seq(), a.kit.system())
                .toCompletableFuture().get(WAIT.toSeconds(), TimeUnit.SECONDS));
        assertInstanceOf(RdmaStreams.ConnectionFailed.class, noChannel.getCause());
        ExecutionException noMember = assertThrows(ExecutionException.class, () -> Source.single(ByteString.fromString("x"))
                .via(cluster.streamTo(new Address("pekko", "members", "127.0.0.1", 1), "echo"))
                .runWith(Sink.seq(), a.kit.system()).toCompletableFuture().get(WAIT.toSeconds(), TimeUnit.SECONDS));
        assertInstanceOf(RdmaStreams.ConnectionFailed.class, noMember.getCause());
        assertTrue(noMember.getCause().getMessage().contains("127.0.0.1:1"), noMember.getCause().getMessage());
        assertThrows(IllegalArgumentException.class, () -> cluster.streamTo(b.address, "c".repeat(48)));

        echo(b, "echo");
        ExecutionException taken = assertThrows(ExecutionException.class, () -> echo(b, "echo"));
        assertInstanceOf(IllegalStateException.class, taken.getCause());
        awaitQueuePairs(a, 1);
        awaitQueuePairs(b, 1);
    }

    /** Membership is the authority over streams too: a member seen unreachable fails its streams, and frees them. */
    @Test
    void aMemberSeenUnreachableFailsTheStreamsToIt() throws Exception {
        List<Member> m = twoMembers();
        Member a = m.get(0);
        Member b = m.get(1);
        TestProbe<Address> from = echo(b, "echo");
        Pair<Pair<BoundedSourceQueue<ByteString>, CompletionStage<RdmaStreams.OutgoingConnection>>,
                CompletionStage<List<ByteString>>> open = Source.<ByteString>queue(16)
                .viaMat(RdmaCluster.get(a.kit.system()).streamTo(b.address, "echo"), Keep.both())
                .toMat(Sink.seq(), Keep.both()).run(a.kit.system());
        open.first().second().toCompletableFuture().get(WAIT.toSeconds(), TimeUnit.SECONDS);
        from.receiveMessage(WAIT);
        awaitQueuePairs(b, 2);

        PuppetFailureDetector.CUT.add(PuppetFailureDetector.pair(a.observer, b.address));
        ExecutionException failed = assertThrows(ExecutionException.class,
                () -> open.second().toCompletableFuture().get(WAIT.toSeconds(), TimeUnit.SECONDS));
        assertInstanceOf(RdmaStreams.ConnectionFailed.class, failed.getCause());
        assertTrue(failed.getCause().getMessage().contains("unreachable"), failed.getCause().getMessage());
        awaitQueuePairs(a, 0);
        awaitQueuePairs(b, 0);
    }
}
