package io.rdmaactors.soft;

import io.rdmaactors.cm.AsyncEvent;
import io.rdmaactors.cm.AsyncEventType;
import io.rdmaactors.verbs.InvalidRequestException;
import io.rdmaactors.verbs.PostException;
import io.rdmaactors.verbs.QueueFullException;
import io.rdmaactors.verbs.ReceiveWorkRequest;
import io.rdmaactors.verbs.ResourceBusyException;
import io.rdmaactors.verbs.ResourceKind;
import io.rdmaactors.verbs.SharedReceiveQueue;
import io.rdmaactors.verbs.VerbsException;
import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicInteger;

final class SoftSharedReceiveQueue extends SoftResource implements SharedReceiveQueue {

    final SoftProtectionDomain pd;
    private final int maxWr;
    private final int maxSge;
    private final long handle;
    private final ArrayDeque<ReceiveWorkRequest> queue = new ArrayDeque<>();
    private int limit;
    final AtomicInteger attached = new AtomicInteger();

    SoftSharedReceiveQueue(SoftProtectionDomain pd, int maxWr, int maxSge) {
        super(pd.fabric, ResourceKind.SHARED_RECEIVE_QUEUE);
        this.pd = pd;
        this.maxWr = maxWr;
        this.maxSge = maxSge;
        this.handle = pd.fabric.nextHandle();
        pd.dependants.incrementAndGet();
    }

    @Override
    public long handle() {
        return handle;
    }

    @Override
    public int maxWr() {
        return maxWr;
    }

    @Override
    public void postReceive(ReceiveWorkRequest... requests) {
        checkOpen("ibv_post_srq_recv");
        synchronized (this) {
            for (int i = 0; i < requests.length; i++) {
                ReceiveWorkRequest wr = requests[i];
                VerbsException refused = null;
                if (wr.sgList().size() > maxSge) {
                    refused = new InvalidRequestException("ibv_post_srq_recv", wr.sgList().size()
                            + " SGEs, the SRQ takes " + maxSge);
                } else if (queue.size() >= maxWr) {
                    refused = new QueueFullException("ibv_post_srq_recv", "the SRQ holds " + maxWr
                            + " receives already");
                }
                if (refused != null) {
                    throw new PostException(refused, i);
                }
                queue.add(wr);
            }
        }
    }

    @Override
    public synchronized void armLimit(int limit) {
        checkOpen("ibv_modify_srq");
        if (limit < 0 || limit > maxWr) {
            throw new InvalidRequestException("ibv_modify_srq", "limit " + limit + " outside 0.." + maxWr);
        }
        this.limit = limit;
    }

    @Override
    public synchronized int posted() {
        return queue.size();
    }

    /** The next receive for an incoming message, or null (receiver not ready). */
    ReceiveWorkRequest take() {
        ReceiveWorkRequest wr;
        boolean limitReached = false;
        synchronized (this) {
            wr = queue.poll();
            if (wr != null && limit > 0 && queue.size() < limit) {
                limit = 0;
                limitReached = true;
            }
        }
        if (limitReached) {
            pd.device.raise(new AsyncEvent.SrqEvent(AsyncEventType.SRQ_LIMIT_REACHED, handle));
        }
        return wr;
    }

    @Override
    void checkDestroyable() {
        if (attached.get() > 0) {
            throw new ResourceBusyException("ibv_destroy_srq", attached.get() + " QPs are still attached");
        }
    }

    @Override
    synchronized void destroy() {
        queue.clear();
        pd.dependants.decrementAndGet();
    }
}
