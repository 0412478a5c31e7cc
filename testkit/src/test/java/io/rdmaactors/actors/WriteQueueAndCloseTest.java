package io.rdmaactors.actors;

import static io.rdmaactors.actors.Connections.WAIT;
import static io.rdmaactors.actors.Connections.numbered;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaactors.actors.RdmaProtocol.ConnectionEvent;
import io.rdmaactors.testkit.RdmaTestKit;
import io.rdmaactors.verbs.Access;
import io.rdmaactors.verbs.WcStatus;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Pekko IO's shape: the write queue, NACK back-pressure beyond it, Register, and the three ways to close. */
class WriteQueueAndCloseTest {

    private RdmaTestKit kit;
    private RdmaTestKit.Listener listener;

    @AfterEach
    void stop() {
        kit.close();
    }

    private RdmaTestKit.Pair connect(String config) {
        kit = RdmaTestKit.create(Connections.SMALL_QUEUES + config);
        listener = kit.listen(8);
        return kit.connect(listener);
    }

    /** Nothing of the test's connections and listener is left registered. */
    private void assertNoLeaks() {
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void theWriteQueueHoldsWhatTheSendQueueCannotAndPostsItInOrder() {
        RdmaTestKit.Pair pair = connect("rdma-actors.write-queue = 1024");
        pair.server().tell(new RdmaProtocol.SuspendReading());
        pair.serverEvents().expectNoMessage(Duration.ofMillis(200));
        // a send queue of 4 and 8 receives held by the reader: most of these wait in the write queue
        for (int n = 0; n < 300; n++) {
            pair.client().tell(numbered(n));
        }
        pair.server().tell(new RdmaProtocol.ResumeReading());
        Connections.assertReceivedInOrder(pair.serverEvents(), 300);
        Set<Object> acked = new HashSet<>();
        for (ConnectionEvent e : pair.clientEvents().receiveSeveralMessages(300, Connections.STREAM_WAIT)) {
            assertTrue(acked.add(assertInstanceOf(RdmaProtocol.Acked.class, e).token()), "acked once: " + e);
        }
        kit.close(pair);
        assertNoLeaks();
    }

    @Test
    void beyondTheWriteQueueCommandsAreRefusedUntilResumeWritingIsAnswered() {
        RdmaTestKit.Pair pair = connect("rdma-actors.write-queue = 2");
        // the first receives posted are filled; then 4 sends wait for receiver-not-ready retries, 2 in the write queue
        int held = Connections.holdTheReader(pair);
        for (int n = held; n < held + 6; n++) {
            pair.client().tell(numbered(n));
        }
        RdmaProtocol.Send refused = numbered(99);
        pair.client().tell(refused);
        assertEquals(refused, pair.clientEvents().expectMessageClass(RdmaProtocol.CommandFailed.class, WAIT).command());
        pair.clientEvents().expectMessageClass(RdmaProtocol.WritingSuspended.class, WAIT);
        // suspended: even a command sent after room appeared is refused until ResumeWriting is answered
        pair.client().tell(new RdmaProtocol.ResumeWriting());
        pair.server().tell(new RdmaProtocol.ResumeReading());
        boolean resumed = false;
        while (!resumed) {
            resumed = pair.clientEvents().receiveMessage(WAIT) instanceof RdmaProtocol.WritingResumed;
        }
        Connections.assertReceivedInOrder(pair.serverEvents(), held + 6);
        kit.close(pair);
        assertNoLeaks();
    }

    @Test
    void closeCompletesWhatWasSentBeforeItThenEndsClosed() {
        RdmaTestKit.Pair pair = connect("");
        for (int n = 0; n < 50; n++) {
            pair.client().tell(numbered(n));
        }
        pair.client().tell(new RdmaProtocol.Close());
        for (int n = 0; n < 50; n++) {
            assertInstanceOf(RdmaProtocol.Acked.class, pair.clientEvents().receiveMessage(WAIT));
        }
        assertInstanceOf(RdmaProtocol.Closed.class,
                pair.clientEvents().expectMessageClass(RdmaProtocol.Disconnected.class, WAIT).reason());
        Connections.assertReceivedInOrder(pair.serverEvents(), 50);
        assertInstanceOf(RdmaProtocol.PeerClosed.class, RdmaTestKit.awaitDisconnected(pair.serverEvents()).reason());
        assertNoLeaks();
    }

    @Test
    void confirmedCloseEndsOnceThePeerConfirmed() {
        RdmaTestKit.Pair pair = connect("");
        pair.client().tell(numbered(0));
        pair.client().tell(new RdmaProtocol.ConfirmedClose());
        RdmaProtocol.Send late = numbered(1);
        pair.client().tell(late);
        // what was sent before the close completes before the connection ends; the late one is
        // refused, before or after the end (a test thread held up between the two tells sends it
        // after the close is done)
        List<Object> answers = new ArrayList<>();
        for (ConnectionEvent e : pair.clientEvents().receiveSeveralMessages(3, WAIT)) {
            answers.add(e instanceof RdmaProtocol.CommandFailed f ? f.command()
                    : e instanceof RdmaProtocol.Disconnected d ? d.reason() : e);
        }
        assertTrue(answers.remove(late), "the late Send is refused: " + answers);
        assertEquals(new RdmaProtocol.Acked(0), answers.get(0));
        assertInstanceOf(RdmaProtocol.ConfirmedClosed.class, answers.get(1));
        assertInstanceOf(RdmaProtocol.PeerClosed.class, RdmaTestKit.awaitDisconnected(pair.serverEvents()).reason());
        assertNoLeaks();
    }

    @Test
    void abortFailsWhatIsOutstandingAndEndsAborted() {
        RdmaTestKit.Pair pair = connect("");
        pair.server().tell(new RdmaProtocol.SuspendReading());
        pair.serverEvents().expectNoMessage(Duration.ofMillis(200));
        for (int n = 0; n < 20; n++) {
            pair.client().tell(numbered(n));
        }
        pair.client().tell(new RdmaProtocol.Abort());
        Set<Object> answered = new HashSet<>();
        RdmaProtocol.Disconnected end = null;
        while (end == null) {
            ConnectionEvent e = pair.clientEvents().receiveMessage(WAIT);
            if (e instanceof RdmaProtocol.Acked a) {
                assertTrue(answered.add(a.token()));
            } else if (e instanceof RdmaProtocol.CommandFailed f) {
                assertTrue(answered.add(((RdmaProtocol.Send) f.command()).ack()));
            } else {
                end = assertInstanceOf(RdmaProtocol.Disconnected.class, e);
            }
        }
        assertEquals(20, answered.size(), "every send answered once, before Disconnected");
        assertInstanceOf(RdmaProtocol.Aborted.class, end.reason());
        RdmaTestKit.awaitDisconnected(pair.serverEvents());
        assertNoLeaks();
    }

    @Test
    void registerHandsTheConnectionToAnotherHandler() {
        RdmaTestKit.Pair pair = connect("");
        TestProbe<ConnectionEvent> next = kit.probe();
        pair.server().tell(new RdmaProtocol.Register(next.getRef()));
        // what the connection sends after the Register is answered to the new handler; a message
        // from the peer races the Register (it may be polled before), so it goes only once that shows
        pair.server().tell(numbered(1));
        next.expectMessageClass(RdmaProtocol.Acked.class, WAIT);
        pair.client().tell(numbered(0));
        assertEquals(0, next.expectMessageClass(RdmaProtocol.Received.class, WAIT).data().asByteBuffer().getInt());
        pair.serverEvents().expectNoMessage(Duration.ofMillis(100));
        // the new handler is the one watched: its death ends the connection
        next.stop();
        assertEquals(Set.of(RdmaProtocol.Received.class, RdmaProtocol.Acked.class),
                pair.clientEvents().receiveSeveralMessages(2, WAIT).stream().map(Object::getClass)
                        .collect(Collectors.toSet()));
        // a handler's death ends its connection without a close: the peer hears a failure
        RdmaProtocol.ErrorClosed ended = assertInstanceOf(RdmaProtocol.ErrorClosed.class,
                RdmaTestKit.awaitDisconnected(pair.clientEvents()).reason());
        assertInstanceOf(RdmaProtocol.PeerFailed.class, ended.cause());
        assertNoLeaks();
    }

    @Test
    void aDataCommandsAnswersGoToItsReplyToAndTheRestToTheHandler() {
        RdmaTestKit.Pair pair = connect("");
        TestProbe<ConnectionEvent> asker = kit.probe();
        pair.client().tell(numbered(0).withReplyTo(asker.getRef()));
        assertEquals(new RdmaProtocol.Acked(0), asker.expectMessageClass(RdmaProtocol.Acked.class, WAIT));
        pair.serverEvents().expectMessageClass(RdmaProtocol.Received.class, WAIT);
        pair.client().tell(new RdmaProtocol.Close());
        RdmaProtocol.Send late = numbered(1).withReplyTo(asker.getRef());
        pair.client().tell(late);
        assertEquals(late, asker.expectMessageClass(RdmaProtocol.CommandFailed.class, WAIT).command());
        // the handler hears only how the connection ended
        assertInstanceOf(RdmaProtocol.Disconnected.class, pair.clientEvents().receiveMessage(WAIT));
        RdmaTestKit.awaitDisconnected(pair.serverEvents());
        assertNoLeaks();
    }

    @Test
    void aConnectionWhoseOwnRequestFailedEndsErrorClosedEveryTime() {
        kit = RdmaTestKit.create(Connections.SMALL_QUEUES);
        listener = kit.listen(8);
        for (int run = 0; run < 20; run++) {
            RdmaTestKit.Pair pair = kit.connect(listener);
            TestProbe<RdmaProtocol.ExportReply> exported = kit.probe();
            pair.server().tell(new RdmaProtocol.Export(ByteBuffer.allocateDirect(64), EnumSet.of(Access.REMOTE_READ),
                    exported.getRef()));
            RemoteRegion readOnly = exported.expectMessageClass(RdmaProtocol.Exported.class, WAIT).region();
            pair.client().tell(RdmaProtocol.Write.of(readOnly, 0, new byte[] {1}, "w"));
            RdmaProtocol.Disconnected end = RdmaTestKit.awaitDisconnected(pair.clientEvents());
            RdmaProtocol.ErrorClosed error = assertInstanceOf(RdmaProtocol.ErrorClosed.class, end.reason(),
                    "run " + run);
            assertEquals(WcStatus.REM_ACCESS_ERR,
                    assertInstanceOf(RdmaProtocol.WorkRequestFailed.class, error.cause()).status());
            RdmaTestKit.awaitDisconnected(pair.serverEvents());
        }
        assertNoLeaks();
    }

    @Test
    void badArgumentsFailAtConstruction() {
        kit = RdmaTestKit.create();
        TestProbe<ConnectionEvent> events = kit.probe();
        InetSocketAddress somewhere = new InetSocketAddress("127.0.0.1", 7471);
        assertThrows(IllegalArgumentException.class,
                () -> RdmaProtocol.Connect.to(somewhere, events.getRef()).withPrivateData(new byte[57]));
        assertThrows(IllegalArgumentException.class, () -> new RdmaProtocol.Accept(events.getRef(), new byte[197]));
        assertThrows(IllegalArgumentException.class, () -> new RdmaProtocol.Reject(new byte[149]));
        assertThrows(NullPointerException.class, () -> new RdmaProtocol.Register(null));
        RemoteRegion region = new RemoteRegion(4096, 64, 7);
        assertThrows(IllegalArgumentException.class, () -> RdmaProtocol.Write.of(region, 60, new byte[8], null));
        assertThrows(IllegalArgumentException.class, () -> RdmaProtocol.Read.of(region, -1, 8, null));
        assertThrows(IllegalArgumentException.class, () -> new RdmaProtocol.FetchAdd(region, 64, 1, null));
    }
}
