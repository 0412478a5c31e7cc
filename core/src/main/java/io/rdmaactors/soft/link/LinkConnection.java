package io.rdmaactors.soft.link;

import io.rdmaactors.soft.wire.CmMessage;
import io.rdmaactors.soft.wire.Packet;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One RC connection's share of a {@link TcpLink}: its number on the link, which every frame of
 * it carries, and the endpoint its frames go to. Fault injection acts here, on one connection,
 * not on the link the others share.
 */
public final class LinkConnection {

    /** The largest segment of a READ's response on a link. */
    public static final int READ_SEGMENT = 128 << 10;

    public final TcpLink link;
    public final int number;
    private volatile TcpLink.Endpoint endpoint;
    /** Fault injection: frames are silently lost both ways. */
    private volatile boolean dropped;
    /** Ended at once, as by a process that dies: frames still queued for it are not sent. */
    public volatile boolean aborted;
    private final AtomicBoolean ended = new AtomicBoolean();
    /** Its frames waiting in the link's {@link LinkOutbox}, under the link's lock. */
    public final ArrayDeque<LinkFrame> waiting = new ArrayDeque<>();

    public LinkConnection(TcpLink link, int number, TcpLink.Endpoint endpoint) {
        this.link = link;
        this.number = number;
        this.endpoint = endpoint;
    }

    /** Whether its packets still waiting to go out may go (its QP has not flushed them). */
    public boolean transmits() {
        return endpoint.transmits();
    }

    /** A listener hands the connection to the id its REQ made. */
    public void attach(TcpLink.Endpoint newEndpoint) {
        endpoint = newEndpoint;
    }

    public void send(Packet packet) {
        if (dropped || ended.get()) {
            return;
        }
        ByteBuffer data = packet.data();
        if (packet.kind() != Packet.Kind.READ_RESPONSE || data.remaining() <= READ_SEGMENT) {
            link.send(new LinkFrame(this, packet, null));
            return;
        }
        // a large READ's response in segments, as an HCA's by path MTU: the requester scatters one
        // while the next is on its way, instead of after the whole of it came
        for (int offset = 0; offset < data.remaining(); offset += READ_SEGMENT) {
            int n = Math.min(READ_SEGMENT, data.remaining() - offset);
            link.send(new LinkFrame(this, Packet.readResponseSegment(packet.psn(), offset,
                    data.slice(data.position() + offset, n), offset + n < data.remaining()), null));
        }
    }

    public void send(CmMessage message) {
        if (!dropped && !ended.get()) {
            link.send(new LinkFrame(this, null, message));
        }
    }

    public void drop() {
        dropped = true;
    }

    /** Ends the connection after the frames already queued; the peer's id hears that it ended. */
    public void close() {
        if (ended.compareAndSet(false, true)) {
            link.release(this);
        }
    }

    /** Ends the connection at once, as a process that dies does. */
    public void abort() {
        aborted = true;
        close();
    }

    // ---------------------------------------------------------------- from the link, on its I/O thread

    public void onCm(CmMessage message) {
        if (!dropped && !ended.get()) {
            endpoint.onCm(this, message);
        }
    }

    public void onPacket(Packet packet) {
        if (dropped || ended.get()) {
            return;
        }
        if (packet.isRequest()) {
            Packet response = endpoint.onRequest(packet);
            if (response != null) {
                send(response);
            }
            endpoint.responded();
        } else {
            endpoint.onResponse(packet);
        }
    }

    /** The peer ended the connection, or the link failed. */
    public void onEnded() {
        if (ended.compareAndSet(false, true)) {
            endpoint.onLinkClosed(this);
        }
    }
}
