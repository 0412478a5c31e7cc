package io.rdmaactors.soft.link;

import io.rdmaactors.soft.wire.Packet;
import java.util.ArrayDeque;

/**
 * The frames a {@link TcpLink} has yet to write, queued by connection and taken one frame per
 * connection in turn, as a NIC's send arbiter serves its QPs: a message of one connection waits
 * for one frame of each other busy connection, not for all they queued before it. One
 * connection's frames leave in order. Guarded by its link's lock, as the connections' queues are.
 */
public final class LinkOutbox {

    /** The connections with frames waiting, in turn. */
    private final ArrayDeque<LinkConnection> turns = new ArrayDeque<>();
    private int size;

    /**
     * Queues a frame after its connection's. An ACK acknowledges every request before it (IB ACK
     * coalescing): one that follows an ACK of its connection still waiting takes its place.
     */
    public void add(LinkFrame frame) {
        ArrayDeque<LinkFrame> waiting = frame.connection().waiting;
        LinkFrame last = waiting.peekLast();
        if (last != null && isAck(last) && isAck(frame) && last.packet().psn() <= frame.packet().psn()) {
            waiting.pollLast();
            waiting.add(frame); // in its place: the connection keeps its turn
            return;
        }
        if (waiting.isEmpty()) {
            turns.add(frame.connection());
        }
        waiting.add(frame);
        size++;
    }

    private static boolean isAck(LinkFrame frame) {
        return frame.packet() != null && frame.packet().kind() == Packet.Kind.ACK;
    }

    /** The frame whose turn it is, or null. */
    public LinkFrame peek() {
        LinkConnection next = turns.peek();
        return next == null ? null : next.waiting.peek();
    }

    /** Takes the frame whose turn it is; its connection's next frame waits for the others'. */
    public LinkFrame poll() {
        LinkConnection next = turns.poll();
        if (next == null) {
            return null;
        }
        LinkFrame frame = next.waiting.poll();
        size--;
        if (!next.waiting.isEmpty()) {
            turns.add(next);
        }
        return frame;
    }

    public int size() {
        return size;
    }

    public boolean isEmpty() {
        return size == 0;
    }

    public void clear() {
        for (LinkConnection c : turns) {
            c.waiting.clear();
        }
        turns.clear();
        size = 0;
    }
}
