package io.rdmaactors.soft;

import io.rdmaactors.cm.AddressVector;
import io.rdmaactors.cm.AsyncEvent;
import io.rdmaactors.cm.AsyncEventType;
import io.rdmaactors.soft.link.LinkConnection;
import io.rdmaactors.verbs.Access;
import io.rdmaactors.verbs.InvalidRequestException;
import io.rdmaactors.verbs.InvalidStateException;
import io.rdmaactors.verbs.MigrationState;
import io.rdmaactors.verbs.QpAttributes;
import io.rdmaactors.verbs.QpInitAttributes;
import io.rdmaactors.verbs.QpState;
import io.rdmaactors.verbs.QpType;
import io.rdmaactors.verbs.QueuePair;
import io.rdmaactors.verbs.ReceiveWorkRequest;
import io.rdmaactors.verbs.ResourceBusyException;
import io.rdmaactors.verbs.ResourceKind;
import io.rdmaactors.verbs.SendWorkRequest;
import io.rdmaactors.verbs.VerbsException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A soft queue pair: its attributes and state machine (ibv_modify_qp, ibv_query_qp), and the roles
 * that run its traffic, laid out as the kernel's rxe driver is: the {@link SoftRequester} sends
 * (rxe_req.c), the {@link SoftResponder} executes the peer's requests and takes datagrams
 * (rxe_resp.c), the {@link SoftCompleter} turns responses into send completions (rxe_comp.c);
 * local memory is reached through the {@link SoftProtectionDomain} (rxe_mr.c). An RC QP, or a UD
 * endpoint.
 *
 * <p>Locking: {@code sendLock} guards the requester and completer, {@code recvLock} the responder
 * and the taking of receives (posting them takes no lock). A thread may take a recvLock (of any
 * QP) while holding a sendLock, never a sendLock while holding a recvLock: so a responder that
 * must enter ERR flushes its receive side at once and leaves its send side to the fabric's timer
 * thread.
 */
final class SoftQueuePair extends SoftResource implements QueuePair {

    final SoftProtectionDomain pd;
    final SoftDevice device;
    final QpInitAttributes init;
    private final int qpn;
    final SoftCompletionQueue sendCq;
    final SoftCompletionQueue recvCq;
    final SoftSharedReceiveQueue srq;
    volatile QpState state = QpState.RESET;

    // attributes, written under both locks
    volatile int portNum = 1;
    int qkey;
    Set<Access> qpAccess = Set.of();
    int pathMtu = 4096;
    private int destQpn;
    private long rqPsn;
    private long sqPsn;
    int maxDestRdAtomic;
    private int maxRdAtomic;
    int minRnrTimer = 12;
    int timeout = 14;
    int retryCount = 7;
    int rnrRetry = 7;
    AddressVector path;
    private AddressVector alternatePath;
    private int alternatePortNum;
    private int alternateTimeout;
    volatile MigrationState migrationState = MigrationState.MIGRATED;
    /** Set once this QP migrated on a failure, so its packets tell the responder to migrate too. */
    boolean migratedOnce;

    /** The peer QP in this JVM, or null when the peer is reached through {@link #link}. */
    volatile SoftQueuePair remote;
    volatile LinkConnection link;
    volatile boolean dropped;
    private volatile int failNextPostErrno;

    final ReentrantLock sendLock = new SpinningLock();
    final ReentrantLock recvLock = new ReentrantLock();
    final SoftRequester requester;
    final SoftCompleter completer;
    final SoftResponder responder;

    private final Set<ByteBuffer> multicastGroups = ConcurrentHashMap.newKeySet();

    SoftQueuePair(SoftProtectionDomain pd, QpInitAttributes init) {
        super(pd.fabric, ResourceKind.QUEUE_PAIR);
        this.pd = pd;
        this.device = pd.device;
        this.init = validate(init);
        this.sendCq = (SoftCompletionQueue) init.sendCq();
        this.recvCq = (SoftCompletionQueue) init.recvCq();
        this.srq = (SoftSharedReceiveQueue) init.srq();
        this.qpn = device.allocateQpn(this);
        this.requester = new SoftRequester(this);
        this.completer = new SoftCompleter(this, requester);
        this.responder = new SoftResponder(this);
        sendCq.attach(this);
        recvCq.attach(this);
        if (srq != null) {
            srq.attached.incrementAndGet();
        }
        pd.dependants.incrementAndGet();
    }

    private QpInitAttributes validate(QpInitAttributes a) {
        String call = "ibv_create_qp";
        if (a.type() == null) {
            throw new InvalidRequestException(call, "a QP needs a type");
        }
        for (var cq : List.of(a.sendCq(), a.recvCq())) {
            if (!(cq instanceof SoftCompletionQueue s) || s.device != device) {
                throw new InvalidRequestException(call, "both CQs must belong to " + device.name());
            }
            s.checkOpen(call);
        }
        if (a.srq() != null) {
            if (!(a.srq() instanceof SoftSharedReceiveQueue s) || s.pd != pd) {
                throw new InvalidRequestException(call, "the SRQ must belong to the QP's protection domain");
            }
            s.checkOpen(call);
        }
        if (a.maxSendWr() < 1 || a.maxSendWr() > SoftDevice.MAX_WR || a.maxSendSge() < 1
                || a.maxSendSge() > SoftDevice.MAX_SGE || a.maxRecvSge() < 1 || a.maxRecvSge() > SoftDevice.MAX_SGE
                || (a.srq() == null && (a.maxRecvWr() < 1 || a.maxRecvWr() > SoftDevice.MAX_WR))
                || a.maxInlineData() < 0 || a.maxInlineData() > 1024) {
            throw new InvalidRequestException(call, "queue sizes outside the device's limits: " + a);
        }
        return a;
    }

    @Override
    public int qpNum() {
        return qpn;
    }

    @Override
    public QpType type() {
        return init.type();
    }

    @Override
    public QpState state() {
        return state;
    }

    @Override
    public QpInitAttributes initAttributes() {
        return init;
    }

    // ---------------------------------------------------------------- state machine

    @Override
    public void modify(QpAttributes a) {
        checkOpen("ibv_modify_qp");
        sendLock.lock();
        try {
            QpState current = state;
            QpState target = a.state() == null ? current : a.state();
            if (!allowed(current, target)) {
                throw new InvalidStateException("ibv_modify_qp", "no transition " + current + " -> " + target);
            }
            if (current == QpState.RTS && target == QpState.RTS) {
                List<String> refused = notModifiableInRts(a);
                if (!refused.isEmpty()) {
                    throw new InvalidStateException("ibv_modify_qp", "RTS -> RTS does not take " + refused);
                }
            }
            if (target == QpState.ERR || target == QpState.RESET) {
                // RESET discards the queues on hardware; flushing them first keeps every request accounted for
                enterError();
                if (target == QpState.RESET) {
                    state = QpState.RESET;
                    remote = null;
                    link = null;
                    alternatePath = null;
                    migrationState = MigrationState.MIGRATED;
                }
                return;
            }
            device.checkAlive("ibv_modify_qp");
            recvLock.lock();
            try {
                apply(current, target, a);
            } finally {
                recvLock.unlock();
            }
            requester.pump();
        } finally {
            sendLock.unlock();
        }
    }

    private static boolean allowed(QpState from, QpState to) {
        if (to == QpState.RESET || to == QpState.ERR) {
            return true;
        }
        switch (from) {
            case RESET: return to == QpState.INIT;
            case INIT: return to == QpState.INIT || to == QpState.RTR;
            case RTR: return to == QpState.RTS;
            case RTS: return to == QpState.RTS || to == QpState.SQD;
            case SQD: return to == QpState.RTS || to == QpState.SQD;
            case SQE: return to == QpState.RTS;
            default: return false;
        }
    }

    /**
     * The attributes set in {@code a} that RTS to RTS does not take: ib_modify_qp_is_ok allows an RC
     * QP its access flags, alternate path, migration state and RNR timer, a UD QP its Q_Key.
     */
    private List<String> notModifiableInRts(QpAttributes a) {
        boolean rc = init.type() == QpType.RC;
        // every connection modifies in RTS once (its RNR timer): no map or stream for the common case
        List<String> set = new ArrayList<>(0);
        refuseIfSet(set, "port_num", a.portNum());
        refuseIfSet(set, "pkey_index", a.pkeyIndex());
        refuseIfSet(set, "path_mtu", a.pathMtu());
        refuseIfSet(set, "dest_qp_num", a.destQpNum());
        refuseIfSet(set, "rq_psn", a.rqPsn());
        refuseIfSet(set, "sq_psn", a.sqPsn());
        refuseIfSet(set, "max_dest_rd_atomic", a.maxDestRdAtomic());
        refuseIfSet(set, "max_rd_atomic", a.maxRdAtomic());
        refuseIfSet(set, "timeout", a.timeout());
        refuseIfSet(set, "retry_cnt", a.retryCount());
        refuseIfSet(set, "rnr_retry", a.rnrRetry());
        refuseIfSet(set, "ah_attr", a.path());
        refuseIfSet(set, "qkey", rc ? a.qkey() : null);
        refuseIfSet(set, "access_flags", rc ? null : a.accessFlags());
        refuseIfSet(set, "min_rnr_timer", rc ? null : a.minRnrTimer());
        refuseIfSet(set, "alt_path", rc ? null : a.alternatePath());
        refuseIfSet(set, "path_mig_state", rc ? null : a.migrationState());
        return set;
    }

    private static void refuseIfSet(List<String> refused, String attribute, Object value) {
        if (value != null) {
            refused.add(attribute);
        }
    }

    private void apply(QpState from, QpState to, QpAttributes a) {
        String call = "ibv_modify_qp";
        boolean rc = init.type() == QpType.RC;
        if (from == QpState.RESET && to == QpState.INIT) {
            if (a.portNum() == null || (rc && a.accessFlags() == null) || (!rc && a.qkey() == null)) {
                throw new InvalidRequestException(call, "RESET -> INIT needs port" + (rc ? ", access flags" : ", qkey"));
            }
        }
        if (from == QpState.INIT && to == QpState.RTR && rc) {
            if (a.path() == null || a.destQpNum() == null || a.rqPsn() == null) {
                throw new InvalidRequestException(call, "INIT -> RTR needs the path, dest QP number and rq PSN");
            }
        }
        if (from == QpState.RTR && to == QpState.RTS && a.sqPsn() == null) {
            throw new InvalidRequestException(call, "RTR -> RTS needs the sq PSN");
        }
        if (a.portNum() != null) {
            device.port(a.portNum(), call);
            portNum = a.portNum();
        }
        if (a.qkey() != null) {
            qkey = a.qkey();
        }
        if (a.accessFlags() != null) {
            qpAccess = a.accessFlags();
        }
        if (a.pathMtu() != null) {
            pathMtu = a.pathMtu();
        }
        if (a.path() != null) {
            path = a.path();
        }
        if (a.destQpNum() != null) {
            destQpn = a.destQpNum();
        }
        if (from == QpState.RESET) {
            responder.expect(0);
        }
        if (a.rqPsn() != null) {
            rqPsn = a.rqPsn();
            responder.expect(rqPsn);
        }
        if (a.sqPsn() != null) {
            sqPsn = a.sqPsn();
            requester.startAt(sqPsn);
        }
        if (a.maxDestRdAtomic() != null) {
            maxDestRdAtomic = a.maxDestRdAtomic();
        }
        if (a.maxRdAtomic() != null) {
            maxRdAtomic = a.maxRdAtomic();
        }
        if (a.minRnrTimer() != null) {
            minRnrTimer = a.minRnrTimer() & 31;
        }
        if (a.timeout() != null) {
            timeout = a.timeout();
        }
        if (a.retryCount() != null) {
            retryCount = a.retryCount();
        }
        if (a.rnrRetry() != null) {
            rnrRetry = a.rnrRetry();
        }
        if (a.alternatePath() != null) {
            if (!rc || from == QpState.RESET) {
                throw new InvalidRequestException(call, "an alternate path needs an RC QP past INIT");
            }
            int altPort = a.alternatePortNum() == null ? portNum : a.alternatePortNum();
            device.port(altPort, call);
            alternatePath = a.alternatePath();
            alternatePortNum = altPort;
            alternateTimeout = a.alternateTimeout() == null ? timeout : a.alternateTimeout();
        }
        if (a.migrationState() != null) {
            switch (a.migrationState()) {
                case REARM:
                    if (alternatePath == null) {
                        throw new InvalidRequestException(call, "REARM needs an alternate path");
                    }
                    // the soft fabric's alternate path is loaded at once
                    migrationState = MigrationState.ARMED;
                    break;
                case MIGRATED:
                    if (migrationState == MigrationState.ARMED) {
                        migrate();
                    }
                    break;
                default:
                    throw new InvalidRequestException(call, "ARMED is reached through REARM, not set");
            }
        }
        if (rc && to == QpState.RTR && path != null && remote == null && link == null) {
            remote = findRemote();
        }
        state = to;
        if (to == QpState.SQD && requester.inflight.isEmpty()) {
            device.raise(new AsyncEvent.QpEvent(AsyncEventType.SQ_DRAINED, qpn));
        }
    }

    /** A manually connected peer in this fabric, named by the path's GID and the dest QP number. */
    private SoftQueuePair findRemote() {
        SoftPort port = fabric.portFor(path.dgid());
        return port == null ? null : port.device.queuePair(destQpn);
    }

    /** Joins a connection set up by the CM: a peer in this JVM, or one on a TCP link. */
    void connectTo(SoftQueuePair peer, LinkConnection tcp) {
        remote = peer;
        link = tcp;
        sendCq.linksChanged();
        recvCq.linksChanged();
    }

    /** Makes the alternate path the primary one: on a lost packet, a MIGRATED packet, or by a modify. */
    void migrate() {
        path = alternatePath;
        portNum = alternatePortNum;
        timeout = alternateTimeout;
        alternatePath = null;
        migrationState = MigrationState.MIGRATED;
    }

    @Override
    public QpAttributes query() {
        checkOpen("ibv_query_qp");
        sendLock.lock();
        recvLock.lock();
        try {
            QpAttributes a = QpAttributes.of().state(state).portNum(portNum).pkeyIndex(0).qkey(qkey)
                    .accessFlags(qpAccess).pathMtu(pathMtu).destQpNum(destQpn).rqPsn((int) rqPsn)
                    .sqPsn((int) sqPsn).maxDestRdAtomic(maxDestRdAtomic).maxRdAtomic(maxRdAtomic)
                    .minRnrTimer(minRnrTimer).timeout(timeout).retryCount(retryCount).rnrRetry(rnrRetry)
                    .path(path).migrationState(migrationState);
            if (alternatePath != null) {
                a.alternatePath(alternatePath).alternatePortNum(alternatePortNum).alternateTimeout(alternateTimeout);
            }
            return a;
        } finally {
            recvLock.unlock();
            sendLock.unlock();
        }
    }

    /**
     * Whether what this QP put on the wire or in a link's outbox may still go out: not once it
     * entered ERR or RESET, which flushed its requests and gave their buffers back to the
     * application, as an HCA stops reading them. A payload is read when its packet goes out.
     */
    boolean transmits() {
        QpState s = state;
        return s != QpState.ERR && s != QpState.RESET;
    }

    /**
     * Enters ERR and flushes both queues. The caller holds sendLock and no recvLock.
     */
    void enterError() {
        state = QpState.ERR;
        completer.flush();
        recvLock.lock();
        try {
            responder.flush();
        } finally {
            recvLock.unlock();
        }
    }

    // ---------------------------------------------------------------- posting

    @Override
    public void postSend(SendWorkRequest... requests) {
        checkOpen("ibv_post_send");
        requester.post(requests);
    }

    @Override
    public void postReceive(ReceiveWorkRequest... requests) {
        checkOpen("ibv_post_recv");
        responder.post(requests);
    }

    void failNextPost(int errno) {
        failNextPostErrno = errno;
    }

    /** The refusal fault injection asked of the next post, send or receive, once; else null. */
    VerbsException injectedRefusal(String call) {
        int errno = failNextPostErrno;
        if (errno == 0) {
            return null;
        }
        failNextPostErrno = 0;
        return VerbsException.of(call, errno, "refused by fault injection");
    }

    // ---------------------------------------------------------------- multicast, faults, teardown

    @Override
    public void attachMulticast(byte[] mgid, int mlid) {
        checkOpen("ibv_attach_mcast");
        if (init.type() != QpType.UD) {
            throw new InvalidRequestException("ibv_attach_mcast", "only UD QPs join multicast groups");
        }
        multicastGroups.add(ByteBuffer.wrap(mgid.clone()));
        fabric.attachMulticast(mgid, this);
    }

    @Override
    public void detachMulticast(byte[] mgid, int mlid) {
        checkOpen("ibv_detach_mcast");
        if (!multicastGroups.remove(ByteBuffer.wrap(mgid))) {
            throw new InvalidRequestException("ibv_detach_mcast", "the QP is not attached to that group");
        }
        fabric.detachMulticast(mgid, this);
    }

    /** From now on every packet to or from this QP is lost. */
    void drop() {
        dropped = true;
    }

    /** Moves to ERR as a device error does (device removal, CQ overrun). */
    void fatal(AsyncEventType event) {
        sendLock.lock();
        try {
            if (state != QpState.ERR) {
                enterError();
                if (event != null) {
                    device.raise(new AsyncEvent.QpEvent(event, qpn));
                }
            }
        } finally {
            sendLock.unlock();
        }
    }

    @Override
    void checkDestroyable() {
        if (!multicastGroups.isEmpty()) {
            throw new ResourceBusyException("ibv_destroy_qp", "the QP is still attached to multicast groups");
        }
    }

    @Override
    void destroy() {
        sendLock.lock();
        try {
            if (state != QpState.ERR) {
                enterError();
            }
            requester.cancelRetransmit();
        } finally {
            sendLock.unlock();
        }
        for (ByteBuffer group : multicastGroups) {
            fabric.detachMulticast(group.array(), this);
        }
        multicastGroups.clear();
        device.releaseQpn(qpn);
        sendCq.detach(this);
        recvCq.detach(this);
        if (srq != null) {
            srq.attached.decrementAndGet();
        }
        pd.dependants.decrementAndGet();
    }
}
