package io.rdmaactors.soft.link;

import io.rdmaactors.soft.wire.Packet;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The link's outbox takes its connections in turn, keeps each one's order, and coalesces ACKs. */
class LinkOutboxTest {

    private final LinkOutbox outbox = new LinkOutbox();
    private final LinkConnection stream = new LinkConnection(null, 1, null);
    private final LinkConnection pingPong = new LinkConnection(null, 2, null);

    @Test
    void aConnectionsFrameWaitsForOneFrameOfEachOtherNotForAllTheyQueued() {
        List<LinkFrame> queued = new ArrayList<>();
        for (int psn = 0; psn < 3; psn++) {
            queued.add(request(stream, psn));
        }
        queued.add(request(pingPong, 0));
        queued.forEach(outbox::add);

        assertEquals(4, outbox.size());
        assertSame(queued.get(0), outbox.poll());
        assertSame(queued.get(3), outbox.poll(), "the ping-pong's frame goes second, not last");
        assertSame(queued.get(1), outbox.peek());
        assertSame(queued.get(1), outbox.poll());
        assertSame(queued.get(2), outbox.poll());
        assertNull(outbox.poll());
        assertTrue(outbox.isEmpty());
    }

    @Test
    void anAckTakesThePlaceOfItsConnectionsAckStillWaiting() {
        outbox.add(ack(stream, 5));
        outbox.add(request(pingPong, 0));
        LinkFrame later = ack(stream, 7);
        outbox.add(later);

        assertEquals(2, outbox.size());
        assertSame(later, outbox.poll());
        assertEquals(Packet.Kind.REQUEST, outbox.poll().packet().kind());
        assertTrue(outbox.isEmpty());
        assertNull(outbox.peek(), "the connection whose ACK was replaced did not take a second turn");

        LinkFrame next = request(pingPong, 1);
        outbox.add(next);
        assertSame(next, outbox.peek());
        assertSame(next, outbox.poll());
    }

    @Test
    void clearingForgetsEveryConnectionsFrames() {
        outbox.add(request(stream, 0));
        outbox.add(request(pingPong, 0));
        outbox.clear();

        assertTrue(outbox.isEmpty());
        assertNull(outbox.peek());
        LinkFrame next = request(stream, 1);
        outbox.add(next);
        assertSame(next, outbox.poll(), "nothing of before comes back");
    }

    private static LinkFrame request(LinkConnection c, long psn) {
        return new LinkFrame(c, new Packet(Packet.Kind.REQUEST, psn, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, null), null);
    }

    private static LinkFrame ack(LinkConnection c, long psn) {
        return new LinkFrame(c, Packet.ack(psn, 4), null);
    }
}
