package io.rdmaactors.jna;

import com.sun.jna.Pointer;
import io.rdmaactors.cm.AddressVector;
import io.rdmaactors.jna.binding.IbvQp;
import io.rdmaactors.jna.binding.IbvQpAttr;
import io.rdmaactors.jna.binding.IbvQpCap;
import io.rdmaactors.jna.binding.IbvQpInitAttr;
import io.rdmaactors.jna.binding.IbvRecvWr;
import io.rdmaactors.jna.binding.IbvSendWr;
import io.rdmaactors.verbs.Access;
import io.rdmaactors.verbs.InvalidRequestException;
import io.rdmaactors.verbs.InvalidStateException;
import io.rdmaactors.verbs.LinkLayer;
import io.rdmaactors.verbs.MigrationState;
import io.rdmaactors.verbs.NotSupportedException;
import io.rdmaactors.verbs.PostException;
import io.rdmaactors.verbs.QpAttributes;
import io.rdmaactors.verbs.QpInitAttributes;
import io.rdmaactors.verbs.QpState;
import io.rdmaactors.verbs.QpType;
import io.rdmaactors.verbs.QueueFullException;
import io.rdmaactors.verbs.QueuePair;
import io.rdmaactors.verbs.ReceiveWorkRequest;
import io.rdmaactors.verbs.ResourceKind;
import io.rdmaactors.verbs.SendFlag;
import io.rdmaactors.verbs.SendOpcode;
import io.rdmaactors.verbs.SendWorkRequest;
import io.rdmaactors.verbs.VerbsException;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.Set;

/** An {@code ibv_qp}, made in a PD ({@code ibv_create_qp}) or on a CM id ({@code rdma_create_qp}). */
final class JnaQueuePair extends JnaResource implements QueuePair {

    private final JnaProtectionDomain pd;
    private final JnaCmId cmId;
    private final QpInitAttributes init;
    private final JnaSharedReceiveQueue srq;
    private final int qpNum;
    private final WorkRequestList sendList = new WorkRequestList();
    private final WorkRequestList recvList = new WorkRequestList();
    private final SendQueueSlots sendSlots;
    private volatile int portNum = 1;

    /**
     * @param asked   the attributes the QP was asked for
     * @param created the native attributes after the create call, which wrote the granted capacities
     */
    JnaQueuePair(JnaProtectionDomain pd, long qp, JnaCmId cmId, QpInitAttributes asked, IbvQpInitAttr created) {
        super(pd.fabric, ResourceKind.QUEUE_PAIR, qp);
        this.pd = pd;
        this.cmId = cmId;
        created.read();
        IbvQpCap cap = created.cap;
        boolean ownReceives = asked.srq() == null;
        this.init = new QpInitAttributes(asked.type(), asked.sendCq(), asked.recvCq(), asked.srq(), cap.max_send_wr,
                ownReceives ? cap.max_recv_wr : asked.maxRecvWr(), cap.max_send_sge,
                ownReceives ? cap.max_recv_sge : asked.maxRecvSge(), cap.max_inline_data, asked.signalAll());
        this.sendSlots = new SendQueueSlots(cap.max_send_wr);
        this.srq = JnaSharedReceiveQueue.of(init.srq(), "ibv_create_qp");
        this.qpNum = new Pointer(qp).getInt(IbvQp.QP_NUM);
        pd.device.register(this);
    }

    /** The native init attributes; the CQs and SRQ are only read, their lifetimes are rdma-core's to check. */
    static IbvQpInitAttr initAttr(QpInitAttributes a, String call) {
        if (a.sendCq() == null || a.recvCq() == null) {
            throw new InvalidRequestException(call, "a QP needs a send and a receive CQ");
        }
        IbvQpInitAttr init = new IbvQpInitAttr();
        init.send_cq = JnaCompletionQueue.of(a.sendCq(), call).pointer;
        init.recv_cq = JnaCompletionQueue.of(a.recvCq(), call).pointer;
        JnaSharedReceiveQueue srq = JnaSharedReceiveQueue.of(a.srq(), call);
        init.srq = srq == null ? 0 : srq.pointer;
        init.cap.max_send_wr = a.maxSendWr();
        init.cap.max_recv_wr = srq == null ? a.maxRecvWr() : 0;
        init.cap.max_send_sge = a.maxSendSge();
        init.cap.max_recv_sge = srq == null ? a.maxRecvSge() : 0;
        init.cap.max_inline_data = a.maxInlineData();
        init.qp_type = a.type().code();
        init.sq_sig_all = a.signalAll() ? 1 : 0;
        return init;
    }

    JnaSharedReceiveQueue srq() {
        return srq;
    }

    @Override
    public int qpNum() {
        return qpNum;
    }

    @Override
    public QpType type() {
        return init.type();
    }

    @Override
    public QpState state() {
        IbvQpAttr attr = new IbvQpAttr();
        long qp = enter("ibv_query_qp");
        try {
            int rc = core.ibv_query_qp(qp, attr, IbvQpAttr.STATE, new IbvQpInitAttr());
            if (rc != 0) {
                throw core.failure("ibv_query_qp", rc);
            }
            return QpState.fromCode(attr.qp_state);
        } finally {
            exit();
        }
    }

    @Override
    public void modify(QpAttributes a) {
        IbvQpAttr attr = new IbvQpAttr();
        int mask = 0;
        if (a.state() != null) {
            attr.qp_state = a.state().code();
            mask |= IbvQpAttr.STATE;
        }
        if (a.accessFlags() != null) {
            attr.qp_access_flags = Access.mask(a.accessFlags());
            mask |= IbvQpAttr.ACCESS_FLAGS;
        }
        if (a.pkeyIndex() != null) {
            attr.pkey_index = a.pkeyIndex().shortValue();
            mask |= IbvQpAttr.PKEY_INDEX;
        }
        if (a.portNum() != null) {
            attr.port_num = a.portNum().byteValue();
            mask |= IbvQpAttr.PORT;
        }
        if (a.qkey() != null) {
            attr.qkey = a.qkey();
            mask |= IbvQpAttr.QKEY;
        }
        if (a.pathMtu() != null) {
            attr.path_mtu = mtuCode(a.pathMtu());
            mask |= IbvQpAttr.PATH_MTU;
        }
        if (a.destQpNum() != null) {
            attr.dest_qp_num = a.destQpNum();
            mask |= IbvQpAttr.DEST_QPN;
        }
        if (a.rqPsn() != null) {
            attr.rq_psn = a.rqPsn();
            mask |= IbvQpAttr.RQ_PSN;
        }
        if (a.sqPsn() != null) {
            attr.sq_psn = a.sqPsn();
            mask |= IbvQpAttr.SQ_PSN;
        }
        if (a.maxDestRdAtomic() != null) {
            attr.max_dest_rd_atomic = a.maxDestRdAtomic().byteValue();
            mask |= IbvQpAttr.MAX_DEST_RD_ATOMIC;
        }
        if (a.maxRdAtomic() != null) {
            attr.max_rd_atomic = a.maxRdAtomic().byteValue();
            mask |= IbvQpAttr.MAX_QP_RD_ATOMIC;
        }
        if (a.minRnrTimer() != null) {
            attr.min_rnr_timer = a.minRnrTimer().byteValue();
            mask |= IbvQpAttr.MIN_RNR_TIMER;
        }
        if (a.timeout() != null) {
            attr.timeout = a.timeout().byteValue();
            mask |= IbvQpAttr.TIMEOUT;
        }
        if (a.retryCount() != null) {
            attr.retry_cnt = a.retryCount().byteValue();
            mask |= IbvQpAttr.RETRY_CNT;
        }
        if (a.rnrRetry() != null) {
            attr.rnr_retry = a.rnrRetry().byteValue();
            mask |= IbvQpAttr.RNR_RETRY;
        }
        if (a.path() != null) {
            attr.ah_attr.set(a.path());
            mask |= IbvQpAttr.AV;
        }
        boolean loadsAlternate = a.alternatePath() != null
                || (a.migrationState() != null && a.migrationState() != MigrationState.MIGRATED);
        if (loadsAlternate) {
            refuseApmOnRoce(a.portNum() != null ? a.portNum() : portNum);
        }
        if (a.alternatePath() != null) {
            attr.alt_ah_attr.set(a.alternatePath());
            attr.alt_port_num = (byte) (a.alternatePortNum() != null ? a.alternatePortNum() : a.alternatePath().portNum());
            attr.alt_timeout = (byte) (a.alternateTimeout() != null ? a.alternateTimeout() : 14);
            mask |= IbvQpAttr.ALT_PATH;
        }
        if (a.migrationState() != null) {
            attr.path_mig_state = a.migrationState().code();
            mask |= IbvQpAttr.PATH_MIG_STATE;
        }
        long qp = enter("ibv_modify_qp");
        try {
            int rc = core.ibv_modify_qp(qp, attr, mask);
            if (rc != 0) {
                throw rc == VerbsException.EINVAL && a.state() != null
                        ? new InvalidStateException("ibv_modify_qp", "cannot move a QP in " + queryState(qp) + " with "
                                + a + " (errno 22)")
                        : core.failure("ibv_modify_qp", rc);
            }
            if (a.portNum() != null) {
                portNum = a.portNum();
            }
            if (a.state() == QpState.ERR) {
                sendSlots.failed();
            } else if (a.state() == QpState.RESET) {
                sendSlots.reset();
            } else if (a.state() == QpState.RTS) {
                sendSlots.recovered();
            }
        } finally {
            exit();
        }
    }

    /** The kernel accepts alternate paths on InfiniBand ports only (measured on Soft-RoCE: EINVAL). */
    private void refuseApmOnRoce(int port) {
        if (pd.device.linkLayer(port) == LinkLayer.ETHERNET) {
            throw new NotSupportedException("ibv_modify_qp", "automatic path migration is not supported on this "
                    + "link layer (Ethernet/RoCE port " + port + " of " + pd.device.name() + ")");
        }
    }

    private static int mtuCode(int bytes) {
        int code = 1;
        for (int b = 256; b < bytes && code < 5; b <<= 1) {
            code++;
        }
        return code;
    }

    private QpState queryState(long qp) {
        IbvQpAttr attr = new IbvQpAttr();
        return core.ibv_query_qp(qp, attr, IbvQpAttr.STATE, new IbvQpInitAttr()) == 0
                ? QpState.fromCode(attr.qp_state) : null;
    }

    @Override
    public QpAttributes query() {
        IbvQpAttr attr = new IbvQpAttr();
        long qp = enter("ibv_query_qp");
        try {
            int rc = core.ibv_query_qp(qp, attr, IbvQpAttr.STANDARD, new IbvQpInitAttr());
            if (rc != 0) {
                throw core.failure("ibv_query_qp", rc);
            }
        } finally {
            exit();
        }
        QpAttributes a = QpAttributes.of().state(QpState.fromCode(attr.qp_state))
                .accessFlags(access(attr.qp_access_flags)).pkeyIndex(Short.toUnsignedInt(attr.pkey_index))
                .portNum(Byte.toUnsignedInt(attr.port_num)).qkey(attr.qkey).pathMtu(128 << attr.path_mtu)
                .destQpNum(attr.dest_qp_num).rqPsn(attr.rq_psn).sqPsn(attr.sq_psn)
                .maxDestRdAtomic(Byte.toUnsignedInt(attr.max_dest_rd_atomic))
                .maxRdAtomic(Byte.toUnsignedInt(attr.max_rd_atomic)).minRnrTimer(attr.min_rnr_timer)
                .timeout(attr.timeout).retryCount(attr.retry_cnt).rnrRetry(attr.rnr_retry)
                .migrationState(migrationState(attr.path_mig_state));
        if (init.type() == QpType.RC) {
            AddressVector path = attr.ah_attr.toAddressVector();
            a.path(path);
            if (attr.alt_port_num != 0) {
                a.alternatePath(attr.alt_ah_attr.toAddressVector()).alternatePortNum(attr.alt_port_num)
                        .alternateTimeout(attr.alt_timeout);
            }
        }
        return a;
    }

    private static Set<Access> access(int mask) {
        Set<Access> set = EnumSet.noneOf(Access.class);
        for (Access x : Access.values()) {
            if ((mask & x.bit()) != 0) {
                set.add(x);
            }
        }
        return set;
    }

    private static MigrationState migrationState(int code) {
        for (MigrationState m : MigrationState.values()) {
            if (m.code() == code) {
                return m;
            }
        }
        return MigrationState.MIGRATED;
    }

    @Override
    public QpInitAttributes initAttributes() {
        return init;
    }

    @Override
    public void postSend(SendWorkRequest... requests) {
        if (requests.length == 0) {
            return;
        }
        synchronized (sendList) {
            int fit = sendSlots.free(requests.length);
            if (fit > 0) {
                SendWorkRequest[] posting = fit == requests.length ? requests : Arrays.copyOf(requests, fit);
                long qp = enter("ibv_post_send");
                try {
                    enterBinds(posting);
                    try {
                        post(qp, posting, fit);
                    } finally {
                        exitBinds(posting, posting.length);
                    }
                } finally {
                    exit();
                }
            }
            if (fit < requests.length) {
                throw new PostException(new QueueFullException("ibv_post_send", "the send queue holds "
                        + init.maxSendWr() + " requests"), fit);
            }
        }
    }

    private void post(long qp, SendWorkRequest[] posting, int fit) {
        sendList.writeSends(posting, init.type() == QpType.UD);
        int rc = pd.device.ops.postSend(qp, sendList.firstAddress(), sendList.badWrAddress());
        int failed = rc == 0 ? fit : sendList.failedIndex(IbvSendWr.SIZE);
        for (int i = 0; i < failed; i++) {
            sendSlots.posted(init.signalAll() || posting[i].has(SendFlag.SIGNALED));
            if (posting[i].opcode() == SendOpcode.BIND_MW) {
                JnaMemoryWindow.of(posting[i].bind().window()).posted(posting[i].bind().rkey());
            }
        }
        if (rc != 0) {
            throw postFailure("ibv_post_send", qp, rc, failed);
        }
    }

    /**
     * Holds the window and region of each bind open through the post (rdma-core reads both); one
     * closed fails the post, after letting go of those before it.
     */
    private static void enterBinds(SendWorkRequest[] requests) {
        for (int i = 0; i < requests.length; i++) {
            if (requests[i].opcode() != SendOpcode.BIND_MW) {
                continue;
            }
            SendWorkRequest.WindowBind bind = requests[i].bind();
            try {
                JnaMemoryWindow mw = JnaMemoryWindow.of(bind.window());
                JnaMemoryRegion mr = JnaMemoryRegion.of(bind.region());
                mw.enter("ibv_post_send");
                try {
                    mr.enter("ibv_post_send");
                } catch (VerbsException e) {
                    mw.exit();
                    throw e;
                }
            } catch (VerbsException e) {
                exitBinds(requests, i);
                throw new PostException(e, i);
            }
        }
    }

    private static void exitBinds(SendWorkRequest[] requests, int count) {
        for (int i = 0; i < count; i++) {
            if (requests[i].opcode() == SendOpcode.BIND_MW) {
                JnaMemoryRegion.of(requests[i].bind().region()).exit();
                JnaMemoryWindow.of(requests[i].bind().window()).exit();
            }
        }
    }

    /** A send of this QP completed successfully. */
    void sendCompleted() {
        sendSlots.completed();
    }

    /** An error completion of this QP: it is in ERR. */
    void failed() {
        sendSlots.failed();
    }

    @Override
    public void postReceive(ReceiveWorkRequest... requests) {
        if (srq != null) {
            throw new InvalidRequestException("ibv_post_recv", "this QP takes its receives from an SRQ");
        }
        if (requests.length == 0) {
            return;
        }
        synchronized (recvList) {
            long qp = enter("ibv_post_recv");
            try {
                recvList.writeReceives(requests);
                int rc = pd.device.ops.postRecv(qp, recvList.firstAddress(), recvList.badWrAddress());
                if (rc != 0) {
                    throw postFailure("ibv_post_recv", qp, rc, recvList.failedIndex(IbvRecvWr.SIZE));
                }
            } finally {
                exit();
            }
        }
    }

    /** EINVAL from a post in a state that cannot take it reads as the state error it is. */
    private PostException postFailure(String call, long qp, int errno, int failed) {
        if (errno == VerbsException.EINVAL) {
            QpState state = queryState(qp);
            boolean sends = call.equals("ibv_post_send");
            if (state == QpState.RESET || (sends && (state == QpState.INIT || state == QpState.RTR))) {
                return new PostException(new InvalidStateException(call, "the QP is in " + state), failed);
            }
        }
        return new PostException(core.failure(call, errno), failed);
    }

    @Override
    public void attachMulticast(byte[] mgid, int mlid) {
        long qp = enter("ibv_attach_mcast");
        try {
            int rc = core.ibv_attach_mcast(qp, mgid.clone(), (short) mlid);
            if (rc != 0) {
                throw core.failure("ibv_attach_mcast", rc);
            }
        } finally {
            exit();
        }
    }

    @Override
    public void detachMulticast(byte[] mgid, int mlid) {
        long qp = enter("ibv_detach_mcast");
        try {
            int rc = core.ibv_detach_mcast(qp, mgid.clone(), (short) mlid);
            if (rc != 0) {
                throw core.failure("ibv_detach_mcast", rc);
            }
        } finally {
            exit();
        }
    }

    @Override
    String destroyCall() {
        return cmId != null ? "rdma_destroy_qp" : "ibv_destroy_qp";
    }

    /** Moves the QP to ERR first, so every outstanding work request completes as flushed. */
    @Override
    int destroy(boolean force) {
        IbvQpAttr attr = new IbvQpAttr();
        attr.qp_state = QpState.ERR.code();
        core.ibv_modify_qp(pointer, attr, IbvQpAttr.STATE);
        if (cmId != null) {
            cmId.destroyQp();
            return 0;
        }
        return core.ibv_destroy_qp(pointer);
    }

    @Override
    void destroyed() {
        pd.device.unregister(this);
        if (cmId != null) {
            cmId.queuePairClosed(this);
        }
    }
}
