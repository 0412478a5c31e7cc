package io.rdmaactors.actors;

import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.QueuePair;
import io.rdmaactors.verbs.ReceiveWorkRequest;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import org.apache.pekko.util.ByteString;

/**
 * A connection's receive side, as its QP actor keeps it: the messages its CQ brought, handed out
 * in order once the handler may have them (after Open, while reading is not suspended, a large one
 * once it was read); the receive slots they came in, reposted together after a poll or lent to the
 * handler with a message received in place; and the arrays the handler released, for later
 * messages to be copied into. The actor tells the handler what this hands out. Single-threaded:
 * the QP actor's.
 */
final class ReceiveQueue {

    /** A message received, in order: in a receive slot, from a shared receive queue, or (a large one) by rendezvous. */
    private interface Inbound {
    }

    private record Held(int slot, int length, Integer immediate) implements Inbound {
    }

    /** A message from a shared receive queue, its bytes already out of the queue's buffer. */
    private record Copied(RdmaProtocol.Received received) implements Inbound {
    }

    /** A large message being read by rendezvous: handed out once {@link ReceiveQueue#read} says it was. */
    static final class Large implements Inbound {
        private final Integer immediate;
        /** Its bytes copied out of the memory they were read into. */
        private ByteString data;
        /** Or, received in place, that memory, lent to the handler with the message. */
        private MemoryRegion readInto;

        private Large(Integer immediate) {
            this.immediate = immediate;
        }

        private boolean read() {
            return data != null || readInto != null;
        }
    }

    private final QueuePair qp;
    private final ConnectionBuffers buffers;
    /** Messages of at least this many bytes stay in their receive slots, lent to the handler until it releases them. */
    private final int receiveInPlace;
    /** Messages not yet handed out, in order: reading is suspended, or a large one is still being read. */
    private final ArrayDeque<Inbound> inbound = new ArrayDeque<>(2);
    /** Receive slots given back since the last repost, reposted together. */
    private final List<ReceiveWorkRequest> reposts = new ArrayList<>();
    /** The list of one repost, the common case: made at the first and kept (QueuePair.postReceive). */
    private ReceiveWorkRequest[] oneReceive;
    /** What the handler released for later messages to fill; made at its first Release. */
    private ReleasedArrays released;
    /** Until the handler has Connected, messages wait: the peer may send before this side is established. */
    private boolean open;
    private boolean suspended;

    ReceiveQueue(QueuePair qp, ConnectionBuffers buffers, RdmaSettings settings) {
        this.qp = qp;
        this.buffers = buffers;
        this.receiveInPlace = buffers.receive != null ? settings.receiveInPlace() : RdmaSettings.NEVER_IN_PLACE;
    }

    /** The handler has Connected: messages may go to it. Returns how many arrived before. */
    int open() {
        open = true;
        return inbound.size();
    }

    boolean isOpen() {
        return open;
    }

    /** SuspendReading (true) or ResumeReading: messages wait, or may go again. */
    void suspend(boolean suspended) {
        this.suspended = suspended;
    }

    boolean suspended() {
        return suspended;
    }

    /** A message in receive slot {@code slot}: to hand out now, or null while it waits behind others or for reading. */
    RdmaProtocol.Received arrived(int slot, int length, Integer immediate) {
        if (handsOutNow()) {
            return handOut(slot, length, immediate);
        }
        inbound.add(new Held(slot, length, immediate));
        return null;
    }

    /** A message copied out of the shared receive queue ({@link #copiedFromShared}): the same. */
    RdmaProtocol.Received arrived(RdmaProtocol.Received copied) {
        if (handsOutNow()) {
            return copied;
        }
        inbound.add(new Copied(copied));
        return null;
    }

    private boolean handsOutNow() {
        return open && !suspended && inbound.isEmpty();
    }

    /** The peer announced a large message: it takes its place among the received ones, to be read. */
    Large announced(Integer immediate) {
        Large large = new Large(immediate);
        inbound.add(large);
        return large;
    }

    /**
     * A large message's read into {@code region} completed: it is lent to the handler in place
     * (true), or copied out (false: the region is free again).
     */
    boolean read(Large large, MemoryRegion region, int length) {
        if (length >= receiveInPlace) {
            large.readInto = region; // the handler's until released
            return true;
        }
        large.data = RendezvousMemory.copyOut(region.buffer());
        return false;
    }

    /** The next message waiting that may be handed out now, or null. */
    RdmaProtocol.Received nextWaiting() {
        Inbound next = inbound.peek();
        if (!open || suspended || next == null || next instanceof Large large && !large.read()) {
            return null;
        }
        inbound.poll();
        if (next instanceof Held h) {
            return handOut(h.slot(), h.length(), h.immediate());
        }
        if (next instanceof Copied copied) {
            return copied.received();
        }
        Large large = (Large) next;
        return large.data != null ? new RdmaProtocol.Received(large.data, large.immediate)
                : new RdmaProtocol.Received(large.readInto.buffer().asReadOnlyBuffer(), large.immediate,
                        new RdmaProtocol.Received.ReadInto(buffers, large.readInto));
    }

    /**
     * A message in its receive slot as the handler gets it: from {@code receive-in-place} bytes on,
     * the slot itself, lent until released; else copied out, the slot reposted.
     */
    private RdmaProtocol.Received handOut(int slot, int length, Integer immediate) {
        RegisteredSlots receive = buffers.receive;
        if (length >= receiveInPlace) {
            int offset = receive.offset(slot);
            ByteBuffer view = receive.memory(slot).slice(offset, length);
            return new RdmaProtocol.Received(view.asReadOnlyBuffer(), immediate,
                    new RdmaProtocol.Received.Slot(receive.region(slot, buffers), slot, offset));
        }
        reposts.add(buffers.repost(slot));
        return copied(receive.memory(slot), receive.offset(slot), length, immediate);
    }

    /** A message from the shared receive queue's slot {@code slot}, copied out before the slot is posted again. */
    RdmaProtocol.Received copiedFromShared(int slot, int length, Integer immediate) {
        return copied(buffers.shared.memory(), buffers.shared.offset(slot), length, immediate);
    }

    /**
     * {@code length} bytes at {@code offset} of receive memory, copied into an array the handler
     * released if there is one; from ReleasedArrays.MIN_LENGTH on, the handler may release it again.
     */
    private RdmaProtocol.Received copied(ByteBuffer memory, int offset, int length, Integer immediate) {
        boolean lent = length >= ReleasedArrays.MIN_LENGTH;
        byte[] data = lent && released != null ? released.take(length) : new byte[length];
        memory.get(offset, data, 0, length);
        return new RdmaProtocol.Received(data.length == length ? ByteString.fromArrayUnsafe(data)
                : ByteString.fromArrayUnsafe(data, 0, length), immediate, lent ? data : null);
    }

    /** The bytes of a rendezvous message (a control message) in receive slot {@code slot}. */
    ByteBuffer control(int slot, int length) {
        RegisteredSlots receive = buffers.receive;
        return receive.memory(slot).duplicate().order(ByteOrder.BIG_ENDIAN).position(receive.offset(slot))
                .limit(receive.offset(slot) + length);
    }

    /** Receive slot {@code slot} is free: it is reposted with the others. */
    void repost(int slot) {
        reposts.add(buffers.repost(slot));
    }

    /** A message received in place, released: its slot is reposted with the others. False if it held none of this connection's. */
    boolean takeBackSlot(RdmaProtocol.Received received) {
        int slot = received.takeSlot(buffers); // only this connection's own receive slots are lent
        if (slot < 0) {
            return false;
        }
        repost(slot);
        return true;
    }

    /** Keeps a released array (none: null) for later messages, on a connection with receive slots of its own. */
    void keep(byte[] data) {
        if (data == null || buffers.receive == null) {
            return;
        }
        if (released == null) {
            released = new ReleasedArrays(buffers.receive.slotSize());
        }
        released.give(data);
    }

    /** Posts the slots given back since the last call, as one list; what the post throws, it throws, the slots dropped. */
    void repostAll() {
        if (reposts.isEmpty()) {
            return;
        }
        try {
            qp.postReceive(reposts.size() == 1 ? one(reposts.get(0)) : reposts.toArray(new ReceiveWorkRequest[0]));
        } finally {
            reposts.clear();
        }
    }

    /** A list of one receive in an array kept for it: the array is this queue's again once posted. */
    private ReceiveWorkRequest[] one(ReceiveWorkRequest request) {
        if (oneReceive == null) {
            oneReceive = new ReceiveWorkRequest[1];
        }
        oneReceive[0] = request;
        return oneReceive;
    }

    /**
     * The peer used more than half the posted receives since the last poll: post another chunk, so a
     * busy connection is not held back by receiver-not-ready while an idle one pins only one chunk.
     * A reader that suspended holds the peer back by not reposting: growing would undo that.
     */
    void grow(int consumed) {
        if (buffers.receive != null && open && !suspended && consumed * 2 > buffers.receive.allocated()) {
            buffers.postNewReceives(qp);
        }
    }
}
