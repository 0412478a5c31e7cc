package io.rdmaactors.actors;

import static io.rdmaactors.actors.Connections.WAIT;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaactors.actors.RdmaProtocol.ConnectionEvent;
import io.rdmaactors.testkit.RdmaTestKit;
import io.rdmaactors.verbs.Access;
import io.rdmaactors.verbs.ResourceKind;
import io.rdmaactors.verbs.WcStatus;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The multi-QP server: 16 connections receive from one shared receive queue. */
class SharedReceiveQueueTest {

    private static final int CONNECTIONS = 16;
    private static final int MESSAGES = 200;
    /** Sends in flight per connection: together more than the SRQ holds, so receivers-not-ready happen. */
    private static final int WINDOW = 8;

    private RdmaTestKit kit;

    @BeforeEach
    void start() {
        kit = RdmaTestKit.create("rdma-actors.receive-queue-depth = 8");
    }

    @AfterEach
    void stop() {
        kit.close();
    }

    /** A listener whose connections receive from its shared receive queue. */
    private RdmaTestKit.Listener srqListener() {
        TestProbe<RdmaProtocol.ListenerEvent> bind = kit.probe();
        kit.manager().tell(new RdmaProtocol.Listen(kit.address(0), bind.getRef(), CONNECTIONS, true));
        return new RdmaTestKit.Listener(bind, bind.expectMessageClass(RdmaProtocol.Listening.class, WAIT));
    }

    @Test
    void sixteenQueuePairsShareOneSrqAndEachReceiveReachesItsOwnConnection() {
        long devicesQueues = kit.fabric().ledger().live(ResourceKind.SHARED_RECEIVE_QUEUE);
        RdmaTestKit.Listener listener = srqListener();
        List<RdmaTestKit.Pair> pairs = new ArrayList<>();
        for (int c = 0; c < CONNECTIONS; c++) {
            pairs.add(kit.connect(listener));
        }
        assertEquals(devicesQueues + 1, kit.fabric().ledger().live(ResourceKind.SHARED_RECEIVE_QUEUE),
                "one SRQ for all");
        assertEquals(CONNECTIONS * 2L, kit.fabric().ledger().live(ResourceKind.QUEUE_PAIR));
        for (int round = 0; round < MESSAGES / WINDOW; round++) {
            for (int c = 0; c < CONNECTIONS; c++) {
                for (int i = 0; i < WINDOW; i++) {
                    int n = round * WINDOW + i;
                    pairs.get(c).client().tell(RdmaProtocol.Send.of(
                            ByteBuffer.allocate(8).putInt(c).putInt(n).array(), n));
                }
            }
            for (RdmaTestKit.Pair p : pairs) {
                p.clientEvents().receiveSeveralMessages(WINDOW, WAIT)
                        .forEach(e -> assertInstanceOf(RdmaProtocol.Acked.class, e));
            }
        }
        for (int c = 0; c < CONNECTIONS; c++) {
            List<ConnectionEvent> received = pairs.get(c).serverEvents().receiveSeveralMessages(MESSAGES, WAIT);
            for (int n = 0; n < MESSAGES; n++) {
                ByteBuffer data = ((RdmaProtocol.Received) received.get(n)).data().asByteBuffer();
                assertEquals(c, data.getInt(), "a receive reached another connection");
                assertEquals(n, data.getInt());
            }
        }
        pairs.forEach(p -> kit.close(p));
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    /**
     * The listener's SRQ outlives the listener while a connection it accepted still has a QP on it
     * (an SRQ cannot be destroyed under an attached QP): the connection carries messages both ways
     * after Unbind, and the SRQ is freed with the last such QP.
     */
    @Test
    void anSrqOutlivesItsListenerUntilItsLastConnectionCloses() {
        long devicesQueues = kit.fabric().ledger().live(ResourceKind.SHARED_RECEIVE_QUEUE);
        RdmaTestKit.Listener listener = srqListener();
        RdmaTestKit.Pair pair = kit.connect(listener);
        kit.unbind(listener);
        assertEquals(devicesQueues + 1, kit.fabric().ledger().live(ResourceKind.SHARED_RECEIVE_QUEUE));
        for (int n = 0; n < 3 * WINDOW * 4; n++) {
            pair.client().tell(RdmaProtocol.Send.of(ByteString.fromArray(new byte[] {(byte) n})));
            pair.server().tell(RdmaProtocol.Send.of(ByteString.fromArray(new byte[] {(byte) -n})));
        }
        for (int n = 0; n < 3 * WINDOW * 4; n++) {
            assertEquals(ByteString.fromArray(new byte[] {(byte) n}),
                    pair.serverEvents().expectMessageClass(RdmaProtocol.Received.class, WAIT).data());
            assertEquals(ByteString.fromArray(new byte[] {(byte) -n}),
                    pair.clientEvents().expectMessageClass(RdmaProtocol.Received.class, WAIT).data());
        }
        kit.close(pair);
        kit.awaitNoLeaks(WAIT);
        assertEquals(devicesQueues, kit.fabric().ledger().live(ResourceKind.SHARED_RECEIVE_QUEUE));
    }

    /**
     * A client's closing notice reaches an SRQ server on its connection's CQ, apart from the
     * disconnect: the server still hears PeerClosed, never a failure, however the two race.
     */
    @Test
    void anSrqServerHearsAClientsCloseAsPeerClosed() {
        RdmaTestKit.Listener listener = srqListener();
        for (int round = 0; round < 20; round++) {
            RdmaTestKit.Pair pair = kit.connect(listener);
            pair.client().tell(new RdmaProtocol.Close());
            assertInstanceOf(RdmaProtocol.PeerClosed.class, RdmaTestKit.awaitDisconnected(pair.serverEvents()).reason(),
                    "round " + round);
            RdmaTestKit.awaitDisconnected(pair.clientEvents());
        }
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    /**
     * The connections of one SRQ share its protection domain, so a region's own key would reach
     * every one of their peers: an export's key is a memory window bound to its connection's QP,
     * and the peer of another connection of the listener is refused with it, before and after the
     * export's own peer used it; Unexport takes it back from that peer too.
     */
    @Test
    void anExportOnAnSrqConnectionReachesItsOwnPeerAlone() {
        RdmaTestKit.Listener listener = srqListener();
        exportReachesItsOwnPeerAlone(kit, kit.connect(listener), kit.connect(listener));
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    /**
     * An export of {@code mine}'s server, which shares its domain with {@code other}'s, reaches
     * {@code mine}'s client alone.
     */
    static void exportReachesItsOwnPeerAlone(RdmaTestKit kit, RdmaTestKit.Pair mine, RdmaTestKit.Pair other) {
        ByteBuffer memory = ByteBuffer.allocateDirect(64);
        TestProbe<RdmaProtocol.ExportReply> exported = kit.probe();
        mine.server().tell(new RdmaProtocol.Export(memory, EnumSet.of(Access.REMOTE_READ, Access.REMOTE_WRITE),
                exported.getRef()));
        RemoteRegion region = exported.expectMessageClass(RdmaProtocol.Exported.class, WAIT).region();
        mine.client().tell(RdmaProtocol.Write.of(region, 0, new byte[] {1, 2, 3, 4}, "mine"));
        mine.clientEvents().expectMessage(WAIT, new RdmaProtocol.Acked("mine"));
        assertEquals(4, memory.get(3));

        RdmaProtocol.Write stolen = RdmaProtocol.Write.of(region, 8, new byte[] {9}, "other");
        other.client().tell(stolen);
        RdmaProtocol.CommandFailed failed = other.clientEvents().expectMessageClass(RdmaProtocol.CommandFailed.class,
                WAIT);
        assertEquals(stolen, failed.command());
        assertEquals(WcStatus.REM_ACCESS_ERR,
                assertInstanceOf(RdmaProtocol.WorkRequestFailed.class, failed.cause()).status());
        assertEquals(0, memory.get(8), "another connection's peer wrote the export");
        RdmaTestKit.awaitDisconnected(other.clientEvents());

        TestProbe<RdmaProtocol.UnexportReply> unexported = kit.probe();
        mine.server().tell(new RdmaProtocol.Unexport(region, unexported.getRef()));
        assertEquals(region, unexported.expectMessageClass(RdmaProtocol.Unexported.class, WAIT).region());
        RdmaProtocol.Write after = RdmaProtocol.Write.of(region, 0, new byte[] {5}, "after");
        mine.client().tell(after);
        assertEquals(after, mine.clientEvents().expectMessageClass(RdmaProtocol.CommandFailed.class, WAIT).command());
        assertEquals(1, memory.get(0), "a write through an unexported key");
        RdmaTestKit.awaitDisconnected(mine.clientEvents());
    }

    /**
     * A large Send from an SRQ connection is announced for its peer to read (rendezvous): in the
     * shared domain through a window bound to that connection's QP, so the message arrives whole.
     */
    @Test
    void aLargeSendFromAnSrqConnectionIsReadThroughItsWindow() {
        RdmaTestKit.Listener listener = srqListener();
        RdmaTestKit.Pair pair = kit.connect(listener);
        largeSendsArriveWhole(kit, pair);
        kit.close(pair);
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    /** Large Sends from {@code pair}'s server, whose domain is shared, arrive whole; no window outlives its read. */
    static void largeSendsArriveWhole(RdmaTestKit kit, RdmaTestKit.Pair pair) {
        byte[] large = new byte[100_000];
        for (int i = 0; i < large.length; i++) {
            large[i] = (byte) (i * 7);
        }
        for (int n = 0; n < 3; n++) {
            pair.server().tell(RdmaProtocol.Send.of(large, "large " + n));
            pair.serverEvents().expectMessage(WAIT, new RdmaProtocol.Acked("large " + n));
            RdmaProtocol.Received received = pair.clientEvents().expectMessageClass(RdmaProtocol.Received.class, WAIT);
            assertArrayEquals(large, received.data().toArray(), "message " + n);
        }
        assertEquals(0, kit.fabric().ledger().live(ResourceKind.MEMORY_WINDOW), "each window closed once read");
    }

    /**
     * An SRQ server's reader that suspends cannot hold its peer back by leaving receives unposted (the
     * SRQ serves every connection): its peer is told to pause, so the client's Sends stop completing
     * instead of piling up at the server; once reading resumes they complete, and what was sent
     * arrives, each once, in order.
     */
    @Test
    void aSuspendedReaderOnAnSrqHoldsItsPeerBack() {
        RdmaTestKit.Listener listener = srqListener();
        RdmaTestKit.Pair pair = kit.connect(listener);
        suspendedReaderHoldsItsPeerBack(pair);
        kit.close(pair);
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    /** {@code pair}'s server, on a shared receive queue, suspends reading: its client is held back until it resumes. */
    static void suspendedReaderHoldsItsPeerBack(RdmaTestKit.Pair pair) {
        pair.server().tell(new RdmaProtocol.SuspendReading());
        int batch = 100;
        int sent = 0;
        boolean heldBack = false;
        // batches a writer can sustain, each acknowledged before the next: without the pause the
        // SRQ would take them all
        while (!heldBack && sent < 100 * batch) {
            for (int i = 0; i < batch; i++, sent++) {
                ByteString message = ByteString.fromArray(ByteBuffer.allocate(4).putInt(sent).array());
                pair.client().tell(RdmaProtocol.Send.of(message, i == batch - 1 ? sent : null));
            }
            heldBack = !acked(pair.clientEvents(), sent - 1);
        }
        assertTrue(heldBack, "the server took " + sent + " messages while its reader was suspended");
        pair.serverEvents().expectNoMessage(Duration.ofMillis(100));

        pair.server().tell(new RdmaProtocol.ResumeReading());
        pair.clientEvents().expectMessage(WAIT, new RdmaProtocol.Acked(sent - 1));
        List<ConnectionEvent> received = pair.serverEvents().receiveSeveralMessages(sent, WAIT);
        for (int n = 0; n < sent; n++) {
            assertEquals(n, ((RdmaProtocol.Received) received.get(n)).data().asByteBuffer().getInt());
        }
        pair.serverEvents().expectNoMessage(Duration.ofMillis(100));
    }

    /** Whether the ack of {@code token} comes within half a second. */
    private static boolean acked(TestProbe<ConnectionEvent> events, int token) {
        ConnectionEvent event;
        try {
            event = events.receiveMessage(Duration.ofMillis(500));
        } catch (AssertionError timedOut) {
            return false;
        }
        assertEquals(new RdmaProtocol.Acked(token), event);
        return true;
    }

    /** An export before the connection is established has no QP to bind its window to: refused, typed. */
    @Test
    void anExportBeforeAnSrqConnectionIsEstablishedIsRefused() {
        RdmaTestKit.Listener listener = srqListener();
        TestProbe<ConnectionEvent> clientEvents = kit.probe();
        kit.manager().tell(RdmaProtocol.Connect.to(listener.address(), clientEvents.getRef()).withTimeout(WAIT));
        RdmaProtocol.ConnectionRequested request = listener.events()
                .expectMessageClass(RdmaProtocol.ConnectionRequested.class, WAIT);
        TestProbe<RdmaProtocol.ExportReply> exported = kit.probe();
        RdmaProtocol.Export early = new RdmaProtocol.Export(ByteBuffer.allocateDirect(64),
                EnumSet.of(Access.REMOTE_READ), exported.getRef());
        request.connection().tell(early);
        RdmaProtocol.CommandFailed refused = exported.expectMessageClass(RdmaProtocol.CommandFailed.class, WAIT);
        assertEquals(early, refused.command());
        assertInstanceOf(RdmaProtocol.ConnectionClosed.class, refused.cause());
        assertTrue(refused.cause().getMessage().contains(request.remote().toString()),
                "the refusal names the connection: " + refused.cause().getMessage());
        TestProbe<ConnectionEvent> serverEvents = kit.probe();
        request.connection().tell(RdmaProtocol.Accept.with(serverEvents.getRef()));
        RdmaProtocol.Connected connected = clientEvents.expectMessageClass(RdmaProtocol.Connected.class, WAIT);
        RdmaProtocol.Connected server = serverEvents.expectMessageClass(RdmaProtocol.Connected.class, WAIT);
        kit.close(new RdmaTestKit.Pair(connected.connection(), clientEvents, server.connection(), serverEvents,
                connected, server));
        kit.unbind(listener);
    }
}
