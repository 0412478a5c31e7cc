package io.rdmaactors.verbs;

/**
 * What a QP is created with ({@code struct ibv_qp_init_attr}). {@code srq} may be null; with one,
 * the QP takes its receives from the SRQ and {@code maxRecvWr} is ignored.
 *
 * @param signalAll every send completes on the CQ, whatever its SIGNALED flag ({@code sq_sig_all})
 */
public record QpInitAttributes(QpType type, CompletionQueue sendCq, CompletionQueue recvCq,
                               SharedReceiveQueue srq, int maxSendWr, int maxRecvWr, int maxSendSge,
                               int maxRecvSge, int maxInlineData, boolean signalAll) {

    /** An RC QP with one CQ for both queues and common depths. */
    public static QpInitAttributes rc(CompletionQueue cq, int maxSendWr, int maxRecvWr) {
        return new QpInitAttributes(QpType.RC, cq, cq, null, maxSendWr, maxRecvWr, 4, 4, 64, false);
    }

    public static QpInitAttributes ud(CompletionQueue cq, int maxSendWr, int maxRecvWr) {
        return new QpInitAttributes(QpType.UD, cq, cq, null, maxSendWr, maxRecvWr, 4, 4, 64, false);
    }

    public QpInitAttributes withSrq(SharedReceiveQueue sharedReceiveQueue) {
        return new QpInitAttributes(type, sendCq, recvCq, sharedReceiveQueue, maxSendWr, maxRecvWr, maxSendSge,
                maxRecvSge, maxInlineData, signalAll);
    }

    public QpInitAttributes withCompletionQueues(CompletionQueue send, CompletionQueue recv) {
        return new QpInitAttributes(type, send, recv, srq, maxSendWr, maxRecvWr, maxSendSge, maxRecvSge,
                maxInlineData, signalAll);
    }

    public QpInitAttributes withSignalAll(boolean all) {
        return new QpInitAttributes(type, sendCq, recvCq, srq, maxSendWr, maxRecvWr, maxSendSge, maxRecvSge,
                maxInlineData, all);
    }
}
