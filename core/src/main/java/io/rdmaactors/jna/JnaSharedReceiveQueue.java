package io.rdmaactors.jna;

import io.rdmaactors.jna.binding.IbvRecvWr;
import io.rdmaactors.jna.binding.IbvSrqAttr;
import io.rdmaactors.verbs.InvalidRequestException;
import io.rdmaactors.verbs.PostException;
import io.rdmaactors.verbs.ReceiveWorkRequest;
import io.rdmaactors.verbs.ResourceKind;
import io.rdmaactors.verbs.SharedReceiveQueue;
import java.util.concurrent.atomic.AtomicInteger;

/** An {@code ibv_srq}; rdma-core refuses to destroy it (EBUSY) while a QP is attached. */
final class JnaSharedReceiveQueue extends JnaResource implements SharedReceiveQueue {

    private final JnaDevice device;
    private final int maxWr;
    private final WorkRequestList list = new WorkRequestList();
    /** Receives posted minus receive completions polled for QPs on this SRQ. */
    private final AtomicInteger posted = new AtomicInteger();

    JnaSharedReceiveQueue(JnaProtectionDomain pd, long srq, int maxWr) {
        super(pd.fabric, ResourceKind.SHARED_RECEIVE_QUEUE, srq);
        this.device = pd.device;
        this.maxWr = maxWr;
    }

    static JnaSharedReceiveQueue of(SharedReceiveQueue srq, String call) {
        if (srq == null || srq instanceof JnaSharedReceiveQueue) {
            return (JnaSharedReceiveQueue) srq;
        }
        throw new InvalidRequestException(call, "not a shared receive queue of the jna fabric: " + srq);
    }

    @Override
    public long handle() {
        return pointer;
    }

    @Override
    public synchronized void postReceive(ReceiveWorkRequest... requests) {
        long srq = enter("ibv_post_srq_recv");
        try {
            list.writeReceives(requests);
            int rc = device.ops.postSrqRecv(srq, list.firstAddress(), list.badWrAddress());
            if (rc != 0) {
                int failed = list.failedIndex(IbvRecvWr.SIZE);
                posted.addAndGet(failed);
                throw new PostException(core.failure("ibv_post_srq_recv", rc), failed);
            }
            posted.addAndGet(requests.length);
        } finally {
            exit();
        }
    }

    /** A receive completion of a QP on this SRQ was polled. */
    void consumed() {
        posted.decrementAndGet();
    }

    @Override
    public void armLimit(int limit) {
        IbvSrqAttr attr = new IbvSrqAttr();
        attr.srq_limit = limit;
        long srq = enter("ibv_modify_srq");
        try {
            int rc = core.ibv_modify_srq(srq, attr, IbvSrqAttr.LIMIT);
            if (rc != 0) {
                throw core.failure("ibv_modify_srq", rc);
            }
        } finally {
            exit();
        }
    }

    @Override
    public int posted() {
        return Math.max(0, posted.get());
    }

    @Override
    public int maxWr() {
        return maxWr;
    }

    @Override
    String destroyCall() {
        return "ibv_destroy_srq";
    }

    @Override
    int destroy(boolean force) {
        return core.ibv_destroy_srq(pointer);
    }
}
