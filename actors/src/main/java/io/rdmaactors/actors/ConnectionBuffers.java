package io.rdmaactors.actors;

import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.MemoryWindow;
import io.rdmaactors.verbs.ProtectionDomain;
import io.rdmaactors.verbs.QueuePair;
import io.rdmaactors.verbs.ReceiveWorkRequest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A connection's registered memory: its send slots, its receive slots (none on a shared receive
 * queue), the memory its handler registered, and the windows of its exports. Slots are registered
 * as traffic first needs them; the CQ actor frees them all after the QP.
 */
final class ConnectionBuffers {

    /** wr_id bit that marks a receive; the low bits are the buffer slot. */
    static final long RECEIVE = 1L << 62;
    private static final ReceiveWorkRequest[] NO_REQUESTS = {};

    final ProtectionDomain pd;
    final RegisteredSlots send;
    /** Null on a shared receive queue. */
    final RegisteredSlots receive;
    /** The shared receive queue (the device's or the listener's) the QP's receives come from, completing on its own CQ; or null. */
    final SharedReceiveBuffers shared;
    /** Memory the handler registered for its Sends (RegisterMemory), deregistered with the QP's buffers. */
    final List<MemoryRegion> local = new ArrayList<>();
    /**
     * The windows of the connection's exports, bound to the QP: freed before it, as rxe's
     * destroy of a QP waits for the windows bound to it (it never returned in the guest).
     */
    final Set<MemoryWindow> exportWindows = ConcurrentHashMap.newKeySet();
    /** Each receive slot's work request, made at its first repost: a repost is the same request again. */
    private ReceiveWorkRequest[] repostRequests = NO_REQUESTS;

    private ConnectionBuffers(ProtectionDomain pd, RdmaSettings settings, SharedReceiveBuffers shared,
                              boolean ownReceives) {
        this.pd = pd;
        this.shared = shared;
        this.send = new RegisteredSlots(pd, settings.bufferSize(), settings.sendQueueDepth());
        this.receive = ownReceives ? new RegisteredSlots(pd, settings.bufferSize(), settings.receiveQueueDepth())
                : null;
    }

    /**
     * Registers and posts the first chunk of receives before the connection can carry a message
     * (more are posted as traffic needs them); a QP on a shared receive queue has none of its own.
     */
    static ConnectionBuffers prepare(QueuePair qp, ProtectionDomain pd, RdmaSettings settings,
                                     SharedReceiveBuffers shared, boolean ownReceives) {
        ConnectionBuffers buffers = new ConnectionBuffers(pd, settings, shared, ownReceives);
        try {
            if (ownReceives) {
                buffers.postNewReceives(qp);
            }
        } catch (RuntimeException e) {
            buffers.close();
            throw e;
        }
        return buffers;
    }

    /**
     * Whether other connections share the domain (a shared receive queue's, whose receives these
     * buffers then do not hold): what the peer may read is then reached through memory windows.
     */
    boolean sharesDomain() {
        return receive == null;
    }

    /** Grows the receive slots by a chunk and posts it; nothing at the receive queue depth. */
    void postNewReceives(QueuePair qp) {
        int first = receive.grow();
        if (first < 0) {
            return;
        }
        ReceiveWorkRequest[] requests = new ReceiveWorkRequest[receive.allocated() - first];
        for (int i = 0; i < requests.length; i++) {
            requests[i] = receiveRequest(first + i);
        }
        qp.postReceive(requests);
    }

    /** A receive slot's work request to repost; a connection that never receives makes none. */
    ReceiveWorkRequest repost(int slot) {
        if (slot >= repostRequests.length) {
            repostRequests = Arrays.copyOf(repostRequests, receive.allocated());
        }
        ReceiveWorkRequest request = repostRequests[slot];
        if (request == null) {
            request = receiveRequest(slot);
            repostRequests[slot] = request;
        }
        return request;
    }

    private ReceiveWorkRequest receiveRequest(int slot) {
        return ReceiveWorkRequest.of(RECEIVE | slot, receive.sge(slot, receive.slotSize()));
    }

    void close() {
        send.close();
        if (receive != null) {
            receive.close();
        }
        local.forEach(MemoryRegion::close);
        local.clear();
    }
}
