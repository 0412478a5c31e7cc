package io.rdmaactors.soft;

import io.rdmaactors.soft.wire.Packet;
import io.rdmaactors.verbs.QpState;
import io.rdmaactors.verbs.SendFlag;
import io.rdmaactors.verbs.WcStatus;
import io.rdmaactors.verbs.WorkCompletion;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The completer of a soft QP, as rxe_comp.c is rxe's: turns the responder's ACKs, read and
 * atomic responses and NAKs into send completions, in the order the requests were posted, and
 * flushes the send queue when the QP enters ERR. It runs under the QP's sendLock, on the
 * {@link SoftRequester}'s queues.
 */
final class SoftCompleter {

    private final SoftQueuePair qp;
    private final SoftRequester requester;

    SoftCompleter(SoftQueuePair qp, SoftRequester requester) {
        this.qp = qp;
        this.requester = requester;
    }

    /** Handles a response from the responder: acks, read data, atomic results and NAKs. */
    void onResponse(Packet r) {
        qp.sendLock.lock();
        try {
            if (qp.state == QpState.ERR || qp.state == QpState.RESET || requester.inflight.isEmpty()) {
                return;
            }
            switch (r.kind()) {
                case ACK:
                    completeThrough(r.psn());
                    requester.credited(r.psn(), r.credits());
                    break;
                case READ_RESPONSE:
                case ATOMIC_RESPONSE:
                    completeThrough(r.psn() - 1);
                    SoftRequester.SendWqe head = requester.inflight.peek();
                    if (head != null && head.psn == r.psn()) {
                        boolean atomic = r.kind() == Packet.Kind.ATOMIC_RESPONSE;
                        ByteBuffer data = atomic
                                ? ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(0, r.compareAdd())
                                : r.data();
                        long offset = atomic ? 0 : r.offset();
                        if (!qp.pd.scatter(head.wr.sgList(), data, offset)) {
                            requester.inflight.poll();
                            complete(head, WcStatus.LOC_PROT_ERR, 0);
                            qp.enterError();
                            return;
                        }
                        if ((r.flags() & Packet.MORE) == 0) {
                            // a READ completes with its last segment
                            requester.inflight.poll();
                            complete(head, WcStatus.SUCCESS, (int) (offset + data.remaining()));
                            completeThrough(r.psn());
                        }
                    }
                    break;
                case NAK_RNR:
                    completeThrough(r.psn() - 1);
                    SoftRequester.SendWqe waiting = requester.inflight.peek();
                    if (waiting == null || waiting.psn != r.psn()) {
                        break;
                    }
                    waiting.rnrAttempts++;
                    if (qp.rnrRetry != 7 && waiting.rnrAttempts > qp.rnrRetry) {
                        requester.inflight.poll();
                        complete(waiting, WcStatus.RNR_RETRY_EXC_ERR, 0);
                        qp.enterError();
                        return;
                    }
                    requester.retryAfterRnr(r.status());
                    break;
                case NAK_ERROR:
                    completeThrough(r.psn() - 1);
                    SoftRequester.SendWqe failed = requester.inflight.poll();
                    if (failed != null) {
                        complete(failed, WcStatus.fromCode((int) r.status()), 0);
                    }
                    qp.enterError();
                    return;
                default:
                    return;
            }
            requester.progressed();
        } finally {
            qp.sendLock.unlock();
        }
    }

    /**
     * An ACK acknowledges every request before it; reads and atomics wait for their own response.
     * A bind or invalidation that ran completes once it is the oldest.
     */
    private void completeThrough(long psn) {
        SoftRequester.SendWqe w;
        while ((w = requester.inflight.peek()) != null) {
            if (w.wr.opcode().isLocal()) {
                requester.inflight.poll();
                if (!completeLocal(w)) {
                    return;
                }
            } else if (w.psn <= psn && SoftRequester.needsPayload(w.wr.opcode())) {
                requester.inflight.poll();
                complete(w, WcStatus.SUCCESS, 0);
            } else {
                return;
            }
        }
    }

    /** Completes a bind or invalidation that ran; false when it failed, which puts the QP in error. */
    boolean completeLocal(SoftRequester.SendWqe w) {
        if (w.localFailure == null) {
            complete(w, WcStatus.SUCCESS, 0);
            return true;
        }
        complete(w, w.localFailure, 0);
        qp.enterError();
        return false;
    }

    /** Completes every outstanding send with WR_FLUSH_ERR, unsignaled ones included. The caller holds sendLock. */
    void flush() {
        requester.stop();
        SoftRequester.SendWqe w;
        while ((w = requester.takeOldest()) != null) {
            complete(w, WcStatus.WR_FLUSH_ERR, 0);
        }
    }

    /** Puts a send's completion on the send CQ: an error always, a success when signaled. */
    void complete(SoftRequester.SendWqe w, WcStatus status, int byteLen) {
        boolean signaled = w.wr.has(SendFlag.SIGNALED) || qp.init.signalAll();
        if (status == WcStatus.SUCCESS && !signaled) {
            return; // its slot is freed when a later signaled completion is polled
        }
        WorkCompletion wc = status == WcStatus.SUCCESS
                ? new WorkCompletion(w.wr.wrId(), status, w.wr.opcode().completion(), 0, byteLen, 0, 0, qp.qpNum(), 0)
                : WorkCompletion.error(w.wr.wrId(), status, qp.qpNum());
        if (!qp.sendCq.push(wc, qp, w.seq, false) && qp.state != QpState.ERR) {
            qp.state = QpState.ERR;
            qp.fabric.execute(() -> {
                qp.sendLock.lock();
                try {
                    qp.enterError();
                } finally {
                    qp.sendLock.unlock();
                }
            });
        }
    }
}
