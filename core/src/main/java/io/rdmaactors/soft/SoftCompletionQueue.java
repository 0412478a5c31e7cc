package io.rdmaactors.soft;

import io.rdmaactors.cm.AsyncEvent;
import io.rdmaactors.cm.AsyncEventType;
import io.rdmaactors.soft.link.LinkConnection;
import io.rdmaactors.soft.link.TcpLink;
import io.rdmaactors.verbs.CompletionChannel;
import io.rdmaactors.verbs.CompletionQueue;
import io.rdmaactors.verbs.InvalidRequestException;
import io.rdmaactors.verbs.ResourceBusyException;
import io.rdmaactors.verbs.ResourceKind;
import io.rdmaactors.verbs.WorkCompletion;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A completion queue. Each entry remembers the QP and send sequence it retires, so polling a send
 * completion frees its send queue slot (and those of the unsignaled sends before it), as the
 * hardware's send queue tail moves on poll.
 *
 * <p>Producers (whoever executes a request or takes its answer) add entries without a lock: the
 * entries form a singly linked list that a producer extends by swapping the tail (Vyukov's
 * multi-producer queue), so a producer never waits for the consumer that busy-polls the same CQ.
 * Pollers take turns under the monitor, as {@code ibv_poll_cq} takes the CQ's lock.
 */
final class SoftCompletionQueue extends SoftResource implements CompletionQueue {

    private static final class Entry {
        /** Null once polled: the entry is then the list's head and holds nothing. */
        WorkCompletion wc;
        SoftQueuePair qp;
        final long sendSeq;
        volatile Entry next;

        Entry(WorkCompletion wc, SoftQueuePair qp, long sendSeq) {
            this.wc = wc;
            this.qp = qp;
            this.sendSeq = sendSeq;
        }
    }

    /**
     * Entries added (counted before they are linked in), in an object of its own: producers write
     * it and pollers do not, so a poll does not take the line from under the next push.
     */
    private static final class Pushed extends AtomicLong {
        /**
         * A value {@link #taken} once had, read by producers instead of it: it only grows, so a stale
         * value overstates the fill, and a producer reads the polled count only when the CQ looks full.
         */
        volatile long takenSeen;
    }

    private static final VarHandle NEXT;

    static {
        try {
            NEXT = MethodHandles.lookup().findVarHandle(Entry.class, "next", Entry.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final SoftDevice device;
    private final SoftCompletionChannel channel;
    private final int capacity;
    private final long handle;
    /** The last entry polled (the first one a placeholder); written by pollers under the monitor. */
    private volatile Entry head = new Entry(null, null, -1);
    private final AtomicReference<Entry> tail = new AtomicReference<>(head);
    private final Pushed pushed = new Pushed();
    /** Entries polled; written by pollers under the monitor. */
    private volatile long taken;
    private final List<SoftQueuePair> users = new ArrayList<>();
    /** 0: disarmed, 1: next completion, 2: next solicited or error completion. */
    private final AtomicInteger armed = new AtomicInteger();
    private volatile boolean overrun;
    private final AtomicInteger unacked = new AtomicInteger();
    /**
     * Polled by a consumer that did not arm it, with connections on links (TcpLinks.pollerStarted);
     * written under the monitor.
     */
    private volatile boolean polling;
    /** The links its QPs' connections run on, progressed by an empty poll; written under the monitor. */
    private volatile TcpLink[] links = new TcpLink[0];
    /** A QP of it has a peer in this JVM and the wire is asynchronous: an empty poll carries the wire. */
    private volatile boolean carriesWire;

    SoftCompletionQueue(SoftDevice device, int capacity, SoftCompletionChannel channel) {
        super(device.fabric, ResourceKind.COMPLETION_QUEUE);
        this.device = device;
        this.capacity = capacity;
        this.channel = channel;
        this.handle = device.fabric.nextHandle();
        if (channel != null) {
            channel.users.incrementAndGet();
        }
    }

    @Override
    public long handle() {
        return handle;
    }

    @Override
    public int capacity() {
        return capacity;
    }

    @Override
    public CompletionChannel channel() {
        return channel;
    }

    @Override
    public boolean pollProgresses() {
        return links.length > 0 || carriesWire;
    }

    /**
     * Adds a completion; false when the CQ overran (CQ_ERR was raised and the caller's QP must
     * enter ERR).
     */
    boolean push(WorkCompletion wc, SoftQueuePair qp, long sendSeq, boolean solicited) {
        if (isClosed()) {
            return true;
        }
        if (overrun || !roomFor(pushed.getAndIncrement())) {
            overran();
            return false;
        }
        Entry e = new Entry(wc, qp, sendSeq);
        tail.getAndSet(e).next = e;
        // after the link, so that a consumer arming now either sees the entry or is fired for it
        while (true) {
            int a = armed.get();
            if (!(a == 1 || (a == 2 && (solicited || !wc.isSuccess())))) {
                return true;
            }
            if (armed.compareAndSet(a, 0)) {
                if (channel != null) {
                    channel.fire(this);
                }
                return true;
            }
        }
    }

    /** Whether the entry counted as {@code index} (from 0) fits beside those not yet polled. */
    private boolean roomFor(long index) {
        if (index - pushed.takenSeen < capacity) {
            return true;
        }
        long now = taken;
        pushed.takenSeen = now;
        return index - now < capacity;
    }

    private synchronized void overran() {
        if (!overrun) {
            overrun = true;
            device.raise(new AsyncEvent.CqEvent(AsyncEventType.CQ_ERR, handle));
        }
    }

    /** Nothing to poll; a producer may be about to link an entry in, which the next poll takes. */
    private boolean isEmpty() {
        Entry h = head;
        return h.next == null && tail.get() == h;
    }

    @Override
    public int poll(WorkCompletion[] out) {
        checkOpen("ibv_poll_cq");
        if (isEmpty()) {
            TcpLink[] on = links;
            if (on.length > 0) {
                if (!polling) {
                    startPolling();
                }
                // the consumer waits: what its connections' links hold may complete something now
                for (TcpLink link : on) {
                    link.progress();
                }
            }
            if (carriesWire) {
                device.fabric.progressWire();
            }
            if (isEmpty()) {
                return 0; // a completion pushed meanwhile is taken by the next poll, as from a device's CQ
            }
        }
        synchronized (this) {
            Entry h = head;
            int n = 0;
            while (n < out.length) {
                Entry next = h.next;
                if (next == null) {
                    if (tail.get() == h) {
                        break;
                    }
                    // a producer swapped the tail and is about to link its entry: a few instructions
                    Thread.onSpinWait();
                    continue;
                }
                out[n++] = next.wc;
                if (next.sendSeq >= 0) {
                    next.qp.requester.retire(next.sendSeq);
                }
                next.wc = null;
                next.qp = null;
                // unlinked, a polled entry that lived long enough to be promoted cannot keep the
                // young ones after it alive (the nepotism java.util.concurrent's queues avoid the same way)
                NEXT.setRelease(h, h);
                h = next;
            }
            head = h;
            taken += n;
            return n;
        }
    }

    /** An empty poll of an unarmed CQ: its consumer polls on rather than sleep (not the poll that follows an arm). */
    private void startPolling() {
        synchronized (this) {
            if (polling || armed.get() != 0 || isClosed()) {
                return;
            }
            polling = true;
        }
        device.fabric.links.pollerStarted();
    }

    private void stopPolling() {
        synchronized (this) {
            if (!polling) {
                return;
            }
            polling = false;
        }
        device.fabric.links.pollerStopped();
    }

    @Override
    public void requestNotify(boolean solicitedOnly) {
        checkOpen("ibv_req_notify_cq");
        if (channel == null) {
            throw new InvalidRequestException("ibv_req_notify_cq", "the CQ has no completion channel");
        }
        // as the kernel does: a solicited-only request does not narrow a next-completion arm
        armed.updateAndGet(a -> a == 1 || !solicitedOnly ? 1 : 2);
        stopPolling();
    }

    void eventDelivered() {
        unacked.incrementAndGet();
    }

    @Override
    public void ackEvents(int count) {
        checkOpen("ibv_ack_cq_events");
        if (count < 0 || count > unacked.get()) {
            throw new InvalidRequestException("ibv_ack_cq_events", "acking " + count + " events, "
                    + unacked.get() + " unacknowledged");
        }
        unacked.addAndGet(-count);
    }

    synchronized void attach(SoftQueuePair qp) {
        users.add(qp);
    }

    synchronized void detach(SoftQueuePair qp) {
        users.remove(qp);
        linksChanged();
    }

    /** A QP of it joined a connection (over a link, or in this JVM) or left one. */
    synchronized void linksChanged() {
        Set<TcpLink> on = new LinkedHashSet<>();
        boolean inJvm = false;
        for (SoftQueuePair qp : users) {
            LinkConnection c = qp.link;
            if (c != null) {
                on.add(c.link);
            } else if (qp.remote != null) {
                inJvm = true;
            }
        }
        links = on.toArray(new TcpLink[0]);
        carriesWire = inJvm && device.fabric.asyncWire();
    }

    @Override
    synchronized void checkDestroyable() {
        if (!users.isEmpty()) {
            throw new ResourceBusyException("ibv_destroy_cq", users.size() + " QPs still use the CQ");
        }
        if (unacked.get() > 0) {
            // ibv_destroy_cq would block forever here; refusing keeps the caller alive
            throw new ResourceBusyException("ibv_destroy_cq", unacked.get() + " channel events are unacknowledged");
        }
    }

    @Override
    void destroy() {
        synchronized (this) {
            head = tail.get(); // what was not polled goes with the CQ
        }
        stopPolling();
        if (channel != null) {
            channel.users.decrementAndGet();
        }
    }
}
