package io.rdmaactors.actors;

import io.rdmaactors.verbs.Device;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.ProtectionDomain;
import io.rdmaactors.verbs.ReceiveWorkRequest;
import io.rdmaactors.verbs.SharedReceiveQueue;
import java.nio.ByteBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A shared receive queue with its receive buffers, which many connections receive from: a device's
 * ({@code receive-queue = per-device}, so an idle connection pins no receive buffer of its own) or a
 * listener's ({@code Listen(..., sharedReceiveQueue = true)}). Each connection's receives complete
 * on its own CQ; its QP actor copies the message out and reposts the slot at once, so every slot
 * stays posted whatever the readers do (a reader that suspends holds its peer back with a pause,
 * {@link ControlMessage.Pause}). Its protection domain is every such connection's, so what a peer
 * may reach goes through memory windows bound to that connection's QP.
 *
 * <p>Freed when the last of its holders released it: the one that made it (the manager, the
 * listener) and each connection from before it creates its QP until that QP is destroyed, as a
 * shared receive queue cannot be destroyed while a QP is attached to it. Thread-safe: the QP actors
 * of many connections repost to it at once, as verbs allow.
 */
final class SharedReceiveBuffers {

    private static final Logger log = LoggerFactory.getLogger(SharedReceiveBuffers.class);

    final ProtectionDomain pd;
    final SharedReceiveQueue srq;
    /** Slots, each a receive buffer: what one connection's CQ must have room for beyond its sends. */
    final int slots;
    private final int slotSize;
    private final MemoryRegion buffers;
    /** What {@link #buffers} registered: every receive reads it, so no view of it is made per receive. */
    private final ByteBuffer memory;
    private final long tag;
    /** The maker's hold and each connection's; zero once freed. */
    private int holds = 1;

    /** @param tag the bits every receive's wr_id carries beside its slot, so a QP actor tells receives from sends */
    SharedReceiveBuffers(Device device, RdmaSettings settings, long tag) {
        this.slotSize = settings.bufferSize();
        // the connections share it: a few times one connection's receive queue
        this.slots = settings.receiveQueueDepth() * 4;
        this.tag = tag;
        this.memory = ByteBuffer.allocateDirect(slots * slotSize);
        this.pd = device.allocateProtectionDomain();
        SharedReceiveQueue queue = null;
        MemoryRegion region = null;
        try {
            queue = pd.createSharedReceiveQueue(slots, 1);
            region = pd.register(memory);
            this.srq = queue;
            this.buffers = region;
            ReceiveWorkRequest[] all = new ReceiveWorkRequest[slots];
            for (int slot = 0; slot < slots; slot++) {
                all[slot] = receive(slot);
            }
            srq.postReceive(all);
        } catch (RuntimeException e) {
            if (region != null) {
                region.close();
            }
            if (queue != null) {
                queue.close();
            }
            pd.close();
            throw e;
        }
    }

    /** A connection's hold, taken before its QP attaches; false once freed (its maker went away). */
    synchronized boolean retain() {
        if (holds == 0) {
            return false;
        }
        holds++;
        return true;
    }

    /** A hold ends (a connection's QP was destroyed, or the maker went away): the last one frees it. */
    void release() {
        synchronized (this) {
            if (holds == 0 || --holds > 0) {
                return;
            }
        }
        try {
            try {
                srq.close();
            } finally {
                try {
                    buffers.close();
                } finally {
                    pd.close();
                }
            }
        } catch (RuntimeException e) {
            // a removed device: the fabric's close frees what is left
            log.warn("could not free a shared receive queue", e);
        }
    }

    /** The memory of every slot: read it with absolute gets only, as many connections do at once. */
    ByteBuffer memory() {
        return memory;
    }

    int offset(int slot) {
        return slot * slotSize;
    }

    void repost(int slot) {
        srq.postReceive(receive(slot));
    }

    private ReceiveWorkRequest receive(int slot) {
        return ReceiveWorkRequest.of(tag | slot, buffers.sge(slot * slotSize, slotSize));
    }
}
