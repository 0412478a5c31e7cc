package io.rdmaactors.jna;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import io.rdmaactors.jna.binding.IbvCq;
import io.rdmaactors.jna.binding.IbvWc;
import io.rdmaactors.verbs.CompletionChannel;
import io.rdmaactors.verbs.CompletionQueue;
import io.rdmaactors.verbs.InvalidRequestException;
import io.rdmaactors.verbs.ResourceBusyException;
import io.rdmaactors.verbs.ResourceKind;
import io.rdmaactors.verbs.WcOpcode;
import io.rdmaactors.verbs.WcStatus;
import io.rdmaactors.verbs.WorkCompletion;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An {@code ibv_cq}. Polls into one reusable native array of {@code ibv_wc}, read through a
 * direct-buffer view, so a batch costs one native call.
 */
final class JnaCompletionQueue extends JnaResource implements CompletionQueue {

    private final JnaDevice device;
    private final JnaCompletionChannel channel;
    private final int capacity;
    private final AtomicInteger unacked = new AtomicInteger();
    private Memory wcArray;
    private ByteBuffer wcView;

    JnaCompletionQueue(JnaDevice device, long cq, JnaCompletionChannel channel) {
        super(device.fabric, ResourceKind.COMPLETION_QUEUE, cq);
        this.device = device;
        this.channel = channel;
        this.capacity = new Pointer(cq).getInt(IbvCq.CQE);
        if (channel != null) {
            channel.attach(this);
        }
    }

    static JnaCompletionQueue of(CompletionQueue cq, String call) {
        if (cq == null || cq instanceof JnaCompletionQueue) {
            return (JnaCompletionQueue) cq;
        }
        throw new InvalidRequestException(call, "not a completion queue of the jna fabric: " + cq);
    }

    @Override
    public long handle() {
        return pointer;
    }

    @Override
    public int capacity() {
        return capacity;
    }

    @Override
    public synchronized int poll(WorkCompletion[] out) {
        long cq = enter("ibv_poll_cq");
        try {
            if (wcArray == null || wcArray.size() < (long) out.length * IbvWc.SIZE) {
                wcArray = new Memory((long) Math.max(1, out.length) * IbvWc.SIZE);
                wcView = wcArray.getByteBuffer(0, wcArray.size()).order(ByteOrder.nativeOrder());
            }
            int n = device.ops.pollCq(cq, out.length, Pointer.nativeValue(wcArray));
            if (n < 0) {
                throw core.failure("ibv_poll_cq", -n);
            }
            for (int i = 0; i < n; i++) {
                out[i] = completion(i * IbvWc.SIZE);
            }
            return n;
        } finally {
            exit();
        }
    }

    private WorkCompletion completion(int at) {
        ByteBuffer b = wcView;
        long wrId = b.getLong(at + IbvWc.WR_ID);
        WcStatus status = WcStatus.fromCode(b.getInt(at + IbvWc.STATUS));
        int qpNum = b.getInt(at + IbvWc.QP_NUM);
        int vendorErr = b.getInt(at + IbvWc.VENDOR_ERR);
        JnaQueuePair qp = device.queuePair(qpNum);
        if (status != WcStatus.SUCCESS) {
            if (qp != null) {
                qp.failed();
            }
            return new WorkCompletion(wrId, status, null, vendorErr, 0, 0, 0, qpNum, 0);
        }
        int opcode = b.getInt(at + IbvWc.OPCODE);
        if (qp != null) {
            if (opcode < WcOpcode.RECV.code()) {
                qp.sendCompleted();
            } else if (qp.srq() != null) {
                qp.srq().consumed();
            }
        }
        int flags = b.getInt(at + IbvWc.WC_FLAGS);
        int imm = (flags & WorkCompletion.WITH_IMM) != 0 ? Integer.reverseBytes(b.getInt(at + IbvWc.IMM_DATA)) : 0;
        return new WorkCompletion(wrId, status, WcOpcode.fromCode(opcode), vendorErr,
                b.getInt(at + IbvWc.BYTE_LEN), imm, flags, qpNum, b.getInt(at + IbvWc.SRC_QP));
    }

    @Override
    public void requestNotify(boolean solicitedOnly) {
        long cq = enter("ibv_req_notify_cq");
        try {
            int rc = device.ops.reqNotifyCq(cq, solicitedOnly ? 1 : 0);
            if (rc != 0) {
                throw core.failure("ibv_req_notify_cq", rc);
            }
        } finally {
            exit();
        }
    }

    void eventTaken() {
        unacked.incrementAndGet();
    }

    @Override
    public void ackEvents(int count) {
        long cq = enter("ibv_ack_cq_events");
        try {
            if (count < 0 || count > unacked.get()) {
                throw new InvalidRequestException("ibv_ack_cq_events", "acking " + count + " events, "
                        + unacked.get() + " unacknowledged");
            }
            unacked.addAndGet(-count);
            core.ibv_ack_cq_events(cq, count);
        } finally {
            exit();
        }
    }

    @Override
    public CompletionChannel channel() {
        return channel;
    }

    @Override
    void checkDestroyable() {
        if (unacked.get() > 0) {
            throw new ResourceBusyException("ibv_destroy_cq", unacked.get() + " completion events are unacknowledged");
        }
    }

    @Override
    String destroyCall() {
        return "ibv_destroy_cq";
    }

    @Override
    int destroy(boolean force) {
        int pending = unacked.getAndSet(0);
        if (pending > 0) {
            core.ibv_ack_cq_events(pointer, pending);
        }
        return core.ibv_destroy_cq(pointer);
    }

    @Override
    void destroyed() {
        if (channel != null) {
            channel.detach(this);
        }
    }
}
