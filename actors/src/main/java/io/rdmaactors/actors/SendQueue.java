package io.rdmaactors.actors;

import io.rdmaactors.verbs.SendFlag;
import io.rdmaactors.verbs.SendWorkRequest;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.function.Predicate;

/**
 * A connection's send side, as its QP actor keeps it: a registered slot per work request that may
 * be outstanding (send queue depth), what each outstanding request carries until it completes,
 * and the write queue of what waits, in order, for a slot. It also knows which requests a later
 * one must be fenced behind. Single-threaded: the QP actor's.
 */
final class SendQueue {

    private final RegisteredSlots slots;
    /**
     * What each slot's work request carries: a user's data command or a rendezvous step. It grows
     * with the registered slots, so an idle connection holds no array of the queue's depth.
     */
    private Object[] outstanding = new Object[0];
    /** The queues start small, as most connections of a large server are idle; traffic grows them. */
    private final ArrayDeque<Integer> freeSlots = new ArrayDeque<>(2);
    /**
     * Work waiting for room in the send queue, oldest first: data commands (at most limit beyond
     * that room) and rendezvous steps.
     */
    private final ArrayDeque<Object> waiting = new ArrayDeque<>(2);
    private final int limit;
    /** The user's Reads outstanding: what is posted meanwhile is fenced behind them. */
    private int readsOutstanding;

    /** @param limit data commands the write queue holds beyond the send queue's room (rdma-actors.write-queue) */
    SendQueue(RegisteredSlots slots, int limit) {
        this.slots = slots;
        this.limit = limit;
    }

    int capacity() {
        return slots.capacity();
    }

    int limit() {
        return limit;
    }

    /** Free send queue entries: registered slots not in use, and slots not yet registered. */
    int room() {
        return slots.capacity() - (slots.allocated() - freeSlots.size());
    }

    /** Nothing outstanding and nothing waiting. */
    boolean idle() {
        return waiting.isEmpty() && room() == slots.capacity();
    }

    boolean nothingWaiting() {
        return waiting.isEmpty();
    }

    /** Whether the write queue takes another data command. */
    boolean hasRoomForCommand() {
        return waiting.size() < limit + room();
    }

    /** Work for a slot, behind what already waits. */
    void enqueue(Object item) {
        waiting.add(item);
    }

    /** How many waiting items could be posted now. */
    int postable() {
        return Math.min(room(), waiting.size());
    }

    /**
     * The next item to post, or null: the oldest; but while the peer's reader is paused, not one
     * that {@code takesPeerReceive}, nor anything behind it other than what {@code bypassesPause}.
     */
    Object nextWaiting(boolean peerPaused, Predicate<Object> takesPeerReceive, Predicate<Object> bypassesPause) {
        Object head = waiting.peek();
        if (!peerPaused || head == null || !takesPeerReceive.test(head)) {
            return waiting.poll();
        }
        for (Iterator<Object> it = waiting.iterator(); it.hasNext(); ) {
            Object item = it.next();
            if (bypassesPause.test(item)) {
                it.remove();
                return item;
            }
        }
        return null;
    }

    /** Takes a waiting item that matches out of the queue, if one waits. */
    boolean removeWaiting(Predicate<Object> test) {
        return waiting.removeIf(test);
    }

    /** Puts work back at the head of what waits: the next to be posted. */
    void requeue(Object item) {
        waiting.addFirst(item);
    }

    /** A free slot, registering more while the queue depth allows; only called when room() > 0. */
    int takeSlot() {
        if (freeSlots.isEmpty()) {
            int first = slots.grow();
            outstanding = Arrays.copyOf(outstanding, slots.allocated());
            for (int slot = first; first >= 0 && slot < slots.allocated(); slot++) {
                freeSlots.add(slot);
            }
        }
        return freeSlots.remove();
    }

    /** A slot taken for an item that was not posted after all. */
    void releaseSlot(int slot) {
        freeSlots.addFirst(slot);
    }

    /** The item is posted in {@code slot}: it is outstanding until {@link #vacate}. */
    void hold(int slot, Object item) {
        outstanding[slot] = item;
        if (item instanceof RdmaProtocol.Read) {
            readsOutstanding++;
        }
    }

    boolean holds(int slot) {
        return slot < outstanding.length && outstanding[slot] != null;
    }

    /** What {@code slot}'s outstanding request carries. */
    Object held(int slot) {
        return outstanding[slot];
    }

    /** Frees a slot whose request completed (or will not) and returns what it carried. */
    Object vacate(int slot) {
        Object item = outstanding[slot];
        outstanding[slot] = null;
        if (item instanceof RdmaProtocol.Read) {
            readsOutstanding--;
        }
        releaseSlot(slot);
        return item;
    }

    /**
     * A Read's data is taken from the peer's memory as its response goes out, so on verbs a later
     * request of this connection (a Write there, a Send whose receiver then writes) may change what
     * it returns: whatever follows an outstanding Read, other than another read, waits for it
     * (IBV_SEND_FENCE), so that the connection's commands take effect in the order they came.
     */
    SendWorkRequest fenced(SendWorkRequest request, boolean read) {
        return readsOutstanding > 0 && !read ? request.with(SendFlag.FENCE) : request;
    }

    /** Whether anything waiting or outstanding matches. */
    boolean any(Predicate<Object> test) {
        for (Object item : waiting) {
            if (test.test(item)) {
                return true;
            }
        }
        for (Object item : outstanding) {
            if (item != null && test.test(item)) {
                return true;
            }
        }
        return false;
    }

    /** Empties the queue: what waited, then what was outstanding, each once, in that order. */
    List<Object> drain() {
        List<Object> all = new ArrayList<>(waiting);
        waiting.clear();
        for (int slot = 0; slot < outstanding.length; slot++) {
            if (outstanding[slot] != null) {
                all.add(vacate(slot));
            }
        }
        return all;
    }
}
