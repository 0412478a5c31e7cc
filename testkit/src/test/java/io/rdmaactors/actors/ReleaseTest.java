package io.rdmaactors.actors;

import static io.rdmaactors.actors.Connections.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaactors.testkit.RdmaTestKit;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Release: a handler hands a message's bytes back, and later messages are copied into them, never under a live one. */
class ReleaseTest {

    private static final int SIZE = 1024;

    private RdmaTestKit kit;
    private RdmaTestKit.Listener listener;

    @AfterEach
    void stop() {
        kit.close();
    }

    /**
     * On connections with receive queues of their own: a message waits in its receive buffer while
     * reading is suspended, so the tests know which message a release's bytes will carry (from the
     * device's shared queue a message is copied out as it arrives).
     */
    private RdmaTestKit.Pair connect(String config) {
        kit = RdmaTestKit.create("rdma-actors.receive-queue = per-connection\n" + config);
        listener = kit.listen(8);
        return kit.connect(listener);
    }

    private static ByteString filled(int value) {
        byte[] data = new byte[SIZE];
        Arrays.fill(data, (byte) value);
        return ByteString.fromArrayUnsafe(data);
    }

    private static RdmaProtocol.Received receive(RdmaTestKit.Pair pair) {
        return pair.serverEvents().expectMessageClass(RdmaProtocol.Received.class, WAIT);
    }

    private void assertNoLeaks(RdmaTestKit.Pair pair) {
        kit.close(pair);
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    /**
     * Releases {@code released} to the server, then has the client send {@code next}: the server's
     * reading is suspended meanwhile, so each of them is copied out only after the release was
     * taken, and received in order.
     */
    private static void releaseThenReceive(RdmaTestKit.Pair pair, RdmaProtocol.Received released, int times,
                                           ByteString... next) {
        pair.server().tell(new RdmaProtocol.SuspendReading());
        pair.serverEvents().expectNoMessage(Duration.ofMillis(200));
        for (ByteString data : next) {
            pair.client().tell(RdmaProtocol.Send.of(data));
        }
        for (int i = 0; i < times; i++) {
            pair.server().tell(new RdmaProtocol.Release(released));
        }
        pair.server().tell(new RdmaProtocol.ResumeReading());
    }

    @Test
    void aReleasedMessagesBytesCarryTheNextMessage() {
        RdmaTestKit.Pair pair = connect("");
        pair.client().tell(RdmaProtocol.Send.of(filled(1)));
        RdmaProtocol.Received first = receive(pair);
        assertTrue(first.releasable());
        releaseThenReceive(pair, first, 1, filled(2));
        RdmaProtocol.Received second = receive(pair);
        assertEquals(filled(2), second.data());
        // the bytes the handler gave back are the ones the second message came in
        assertEquals(filled(2), first.data());
        assertFalse(first.releasable(), "released once");
        assertTrue(second.releasable());
        assertNoLeaks(pair);
    }

    @Test
    void smallMessagesAreNotReleasableAndASecondReleaseDoesNothing() {
        RdmaTestKit.Pair pair = connect("");
        pair.client().tell(RdmaProtocol.Send.of(ByteString.fromString("small")));
        assertFalse(receive(pair).releasable(), "a small message is cheaper to allocate");
        pair.client().tell(RdmaProtocol.Send.of(filled(1)));
        RdmaProtocol.Received first = receive(pair);
        releaseThenReceive(pair, first, 2, filled(2), filled(3));
        RdmaProtocol.Received second = receive(pair);
        RdmaProtocol.Received third = receive(pair);
        // released twice, its bytes would have carried both
        assertEquals(filled(2), second.data());
        assertEquals(filled(3), third.data());
        assertNoLeaks(pair);
    }

    @Test
    void aReleaseBehindASendOfTheSameBytesStillWaitingForRoomLeavesThemToIt() {
        RdmaTestKit.Pair pair = connect("rdma-actors.send-queue-depth = 4\nrdma-actors.receive-queue-depth = 8");
        // the client reads nothing: the server's first sends fill its posted receives, the next
        // four its send queue (receiver not ready), and the echo below waits in the write queue
        pair.client().tell(new RdmaProtocol.SuspendReading());
        pair.clientEvents().expectNoMessage(Duration.ofMillis(200));
        int fillers = RegisteredSlots.FIRST + 4;
        for (int n = 0; n < fillers; n++) {
            pair.server().tell(RdmaProtocol.Send.of(ByteString.fromString("filler")));
        }
        pair.client().tell(RdmaProtocol.Send.of(filled(1)));
        RdmaProtocol.Received echoed = receive(pair);
        pair.server().tell(RdmaProtocol.Send.of(echoed.data(), "echo"));
        releaseThenReceive(pair, echoed, 1, filled(2));
        assertEquals(filled(2), receive(pair).data());
        pair.client().tell(new RdmaProtocol.ResumeReading());
        for (int n = 0; n < fillers; n++) {
            assertEquals(ByteString.fromString("filler"),
                    pair.clientEvents().expectMessageClass(RdmaProtocol.Received.class, WAIT).data());
        }
        assertEquals(filled(1), pair.clientEvents().expectMessageClass(RdmaProtocol.Received.class, WAIT).data());
        assertNoLeaks(pair);
    }

    @Test
    void aSendReleasingWhatItEchoesTakesTheBytesBackOnceItCopiedThem() {
        RdmaTestKit.Pair pair = connect("");
        pair.client().tell(RdmaProtocol.Send.of(filled(1)));
        RdmaProtocol.Received first = receive(pair);
        pair.server().tell(new RdmaProtocol.SuspendReading());
        pair.serverEvents().expectNoMessage(Duration.ofMillis(200));
        pair.server().tell(RdmaProtocol.Send.of(first.data(), "echo").releasing(first));
        pair.client().tell(RdmaProtocol.Send.of(filled(2)));
        pair.server().tell(new RdmaProtocol.ResumeReading());
        // the echo's Acked and the next message, in either order
        List<RdmaProtocol.ConnectionEvent> events = pair.serverEvents().receiveSeveralMessages(2, WAIT);
        assertTrue(events.contains(new RdmaProtocol.Acked("echo")), "acked: " + events);
        assertTrue(events.contains(new RdmaProtocol.Received(filled(2), null)), "received: " + events);
        assertEquals(filled(1), pair.clientEvents().expectMessageClass(RdmaProtocol.Received.class, WAIT).data(),
                "the echo was copied before its bytes were released");
        assertEquals(filled(2), first.data(), "the next message came in the released bytes");
        assertNoLeaks(pair);
    }

    @Test
    void aRefusedSendReleasesNothing() {
        RdmaTestKit.Pair pair = connect("");
        pair.client().tell(RdmaProtocol.Send.of(filled(1)));
        RdmaProtocol.Received first = receive(pair);
        pair.server().tell(new RdmaProtocol.Close());
        RdmaProtocol.Send refused = RdmaProtocol.Send.of(first.data(), "echo").releasing(first);
        pair.server().tell(refused);
        // refused while closing, or by the closed connection if the close was through first
        List<RdmaProtocol.ConnectionEvent> events = pair.serverEvents().receiveSeveralMessages(2, WAIT);
        RdmaProtocol.CommandFailed failed = (RdmaProtocol.CommandFailed) events.stream()
                .filter(e -> e instanceof RdmaProtocol.CommandFailed).findFirst().orElseThrow();
        assertEquals(refused, failed.command());
        assertTrue(events.stream().anyMatch(e -> e instanceof RdmaProtocol.Disconnected), "events: " + events);
        assertTrue(first.releasable(), "the handler may send its data again");
        assertEquals(filled(1), first.data());
        RdmaTestKit.awaitDisconnected(pair.clientEvents());
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void aReleaseToAClosedConnectionIsNotRefused() {
        RdmaTestKit.Pair pair = connect("");
        pair.client().tell(RdmaProtocol.Send.of(filled(1)));
        RdmaProtocol.Received received = receive(pair);
        pair.server().tell(new RdmaProtocol.Close());
        assertInstanceOf(RdmaProtocol.Closed.class, RdmaTestKit.awaitDisconnected(pair.serverEvents()).reason());
        pair.server().tell(new RdmaProtocol.Release(received));
        pair.server().tell(RdmaProtocol.Send.of(filled(2), "late"));
        // the late Send is refused, the Release before it is not
        RdmaProtocol.CommandFailed refused = pair.serverEvents().expectMessageClass(RdmaProtocol.CommandFailed.class,
                WAIT);
        assertInstanceOf(RdmaProtocol.Send.class, refused.command());
        RdmaTestKit.awaitDisconnected(pair.clientEvents());
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }
}
