package io.rdmaactors.actors;

import io.rdmaactors.verbs.Device;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.ProtectionDomain;
import io.rdmaactors.verbs.ReceiveWorkRequest;
import io.rdmaactors.verbs.SharedReceiveQueue;
import java.nio.ByteBuffer;

/**
 * The shared receive queue of one device, which connections receive from with
 * {@code receive-queue = per-device}: an idle connection then pins no receive buffer of its own.
 * Each connection's receives complete on its own CQ; its QP actor copies the message out and
 * reposts the slot at once, so every slot stays posted whatever the readers do (a reader that
 * suspends holds its peer back with a pause, {@link ControlMessage.Pause}). Its protection domain is
 * every such connection's, so what a peer may reach goes through memory windows bound to that
 * connection's QP. Made when the manager starts, freed by it once every connection stopped (a
 * shared receive queue cannot be destroyed while a QP is attached to it).
 * Thread-safe: the QP actors of many connections repost to it at once, as verbs allow.
 */
final class DeviceReceiveQueue implements AutoCloseable {

    final ProtectionDomain pd;
    final SharedReceiveQueue srq;
    /** Slots, each a receive buffer: what one connection's CQ must have room for beyond its sends. */
    final int slots;
    private final int slotSize;
    private final MemoryRegion buffers;
    private final long tag;

    /** @param tag the bits every receive's wr_id carries beside its slot, so a QP actor tells receives from sends */
    DeviceReceiveQueue(Device device, RdmaSettings settings, long tag) {
        this.slotSize = settings.bufferSize();
        // the connections of a device share it: a few times one connection's receive queue
        this.slots = settings.receiveQueueDepth() * 4;
        this.tag = tag;
        this.pd = device.allocateProtectionDomain();
        SharedReceiveQueue queue = null;
        MemoryRegion memory = null;
        try {
            queue = pd.createSharedReceiveQueue(slots, 1);
            memory = pd.register(ByteBuffer.allocateDirect(slots * slotSize));
            this.srq = queue;
            this.buffers = memory;
            ReceiveWorkRequest[] all = new ReceiveWorkRequest[slots];
            for (int slot = 0; slot < slots; slot++) {
                all[slot] = receive(slot);
            }
            srq.postReceive(all);
        } catch (RuntimeException e) {
            if (memory != null) {
                memory.close();
            }
            if (queue != null) {
                queue.close();
            }
            pd.close();
            throw e;
        }
    }

    /** The memory of every slot: read it with absolute gets only, as many connections do at once. */
    ByteBuffer memory() {
        return buffers.buffer();
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

    @Override
    public void close() {
        try {
            srq.close();
        } finally {
            try {
                buffers.close();
            } finally {
                pd.close();
            }
        }
    }
}
