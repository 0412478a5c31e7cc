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
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A completion queue. Each entry remembers the QP and send sequence it retires, so polling a send
 * completion frees its send queue slot (and those of the unsignaled sends before it), as the
 * hardware's send queue tail moves on poll.
 */
final class SoftCompletionQueue extends SoftResource implements CompletionQueue {

    final SoftDevice device;
    private final SoftCompletionChannel channel;
    private final int capacity;
    private final long handle;
    /*
     * The entries, a ring of three parallel arrays (the completion, the QP it retires a send of, and
     * that send's sequence or -1), grown up to the capacity as the CQ fills: a completion adds no
     * object of the CQ's own. Guarded by the monitor.
     */
    private WorkCompletion[] completions = new WorkCompletion[2];
    private SoftQueuePair[] retiring = new SoftQueuePair[2];
    private long[] sendSeqs = new long[2];
    /** Where the oldest entry is. */
    private int oldest;
    /**
     * How many entries there are, readable without the monitor: a poll of an empty CQ, what a
     * busy-polling consumer does most, takes no lock, so it never makes the producer wait for it.
     */
    private volatile int count;
    private final List<SoftQueuePair> users = new ArrayList<>();
    /** 0: disarmed, 1: next completion, 2: next solicited or error completion. */
    private int armed;
    private boolean overrun;
    private final AtomicInteger unacked = new AtomicInteger();
    /**
     * Polled by a consumer that did not arm it, with connections on links (TcpLinks.pollerStarted);
     * written under the monitor.
     */
    private volatile boolean polling;
    /** As {@link #polling}, for the wire between QPs of this JVM. */
    private volatile boolean wirePolling;
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
        boolean fire;
        synchronized (this) {
            if (isClosed()) {
                return true;
            }
            if (overrun || count >= capacity) {
                if (!overrun) {
                    overrun = true;
                    device.raise(new AsyncEvent.CqEvent(AsyncEventType.CQ_ERR, handle));
                }
                return false;
            }
            if (count == completions.length) {
                grow();
            }
            int at = wrap(oldest + count);
            completions[at] = wc;
            retiring[at] = qp;
            sendSeqs[at] = sendSeq;
            count++;
            fire = armed == 1 || (armed == 2 && (solicited || !wc.isSuccess()));
            if (fire) {
                armed = 0;
            }
        }
        if (fire && channel != null) {
            channel.fire(this);
        }
        return true;
    }

    @Override
    public int poll(WorkCompletion[] out) {
        checkOpen("ibv_poll_cq");
        if (count == 0) {
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
                if (!wirePolling) {
                    startWirePolling();
                }
                device.fabric.wire().progress(wirePolling);
            }
            if (count == 0) {
                return 0; // a completion pushed meanwhile is taken by the next poll, as from a device's CQ
            }
        }
        synchronized (this) {
            int n = Math.min(out.length, count);
            for (int i = 0; i < n; i++) {
                out[i] = completions[oldest];
                if (sendSeqs[oldest] >= 0) {
                    retiring[oldest].requester.retire(sendSeqs[oldest]);
                }
                completions[oldest] = null;
                retiring[oldest] = null;
                oldest = wrap(oldest + 1);
            }
            count -= n;
            return n;
        }
    }

    private int wrap(int index) {
        return index < completions.length ? index : index - completions.length;
    }

    /** Doubles the ring (at most to the capacity), the oldest entry first in the new one. */
    private void grow() {
        int size = (int) Math.min((long) completions.length * 2, Math.max(capacity, 2));
        WorkCompletion[] wcs = new WorkCompletion[size];
        SoftQueuePair[] qps = new SoftQueuePair[size];
        long[] seqs = new long[size];
        for (int i = 0; i < count; i++) {
            int from = wrap(oldest + i);
            wcs[i] = completions[from];
            qps[i] = retiring[from];
            seqs[i] = sendSeqs[from];
        }
        completions = wcs;
        retiring = qps;
        sendSeqs = seqs;
        oldest = 0;
    }

    /** An empty poll of an unarmed CQ: its consumer polls on rather than sleep (not the poll that follows an arm). */
    private void startPolling() {
        synchronized (this) {
            if (polling || armed != 0 || isClosed()) {
                return;
            }
            polling = true;
        }
        device.fabric.links.pollerStarted();
    }

    /** As {@link #startPolling}, for the wire between QPs of this JVM: posts need not wake its thread. */
    private void startWirePolling() {
        synchronized (this) {
            if (wirePolling || armed != 0 || isClosed()) {
                return;
            }
            wirePolling = true;
        }
        device.fabric.wire().pollerStarted();
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

    private void stopWirePolling() {
        synchronized (this) {
            if (!wirePolling) {
                return;
            }
            wirePolling = false;
        }
        device.fabric.wire().pollerStopped();
    }

    @Override
    public void requestNotify(boolean solicitedOnly) {
        checkOpen("ibv_req_notify_cq");
        if (channel == null) {
            throw new InvalidRequestException("ibv_req_notify_cq", "the CQ has no completion channel");
        }
        synchronized (this) {
            // as the kernel does: a solicited-only request does not narrow a next-completion arm
            if (armed != 1) {
                armed = solicitedOnly ? 2 : 1;
            }
        }
        stopPolling();
        stopWirePolling();
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
            completions = new WorkCompletion[0];
            retiring = new SoftQueuePair[0];
            sendSeqs = new long[0];
            oldest = 0;
            count = 0;
        }
        stopPolling();
        stopWirePolling();
        if (channel != null) {
            channel.users.decrementAndGet();
        }
    }
}
