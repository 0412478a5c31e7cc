package io.rdmaactors.soft;

import io.rdmaactors.cm.AddressVector;
import io.rdmaactors.cm.AsyncEvent;
import io.rdmaactors.cm.AsyncEventType;
import io.rdmaactors.verbs.Access;
import io.rdmaactors.verbs.InvalidRequestException;
import io.rdmaactors.verbs.InvalidStateException;
import io.rdmaactors.verbs.MigrationState;
import io.rdmaactors.verbs.PostException;
import io.rdmaactors.verbs.QpAttributes;
import io.rdmaactors.verbs.QpInitAttributes;
import io.rdmaactors.verbs.QpState;
import io.rdmaactors.verbs.QpType;
import io.rdmaactors.verbs.QueueFullException;
import io.rdmaactors.verbs.QueuePair;
import io.rdmaactors.verbs.ReceiveWorkRequest;
import io.rdmaactors.verbs.ResourceBusyException;
import io.rdmaactors.verbs.ResourceKind;
import io.rdmaactors.verbs.ScatterGatherElement;
import io.rdmaactors.verbs.SendFlag;
import io.rdmaactors.verbs.SendOpcode;
import io.rdmaactors.verbs.SendWorkRequest;
import io.rdmaactors.verbs.VerbsException;
import io.rdmaactors.verbs.WcOpcode;
import io.rdmaactors.verbs.WcStatus;
import io.rdmaactors.verbs.WorkCompletion;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A soft queue pair: an RC requester and responder, or a UD endpoint.
 *
 * <p>Locking: {@code sendLock} guards the requester, {@code recvLock} the responder and receive
 * queue. A thread may take a recvLock (of any QP) while holding a sendLock, never a sendLock while
 * holding a recvLock: so a responder that must enter ERR flushes its receive side at once and
 * leaves its send side to the fabric's timer thread.
 */
final class SoftQueuePair extends SoftResource implements QueuePair {

    private static final int GRH_BYTES = 40;
    /** IB spec table 45: RNR NAK timer field to microseconds (index 0 is 655.36 ms). */
    private static final int[] RNR_TIMER_MICROS = {655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640,
        960, 1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720, 40960, 61440, 81920, 122880, 163840,
        245760, 327680, 491520};

    /** A send work request on its way: its payload, PSN once transmitted. */
    private static final class SendWqe {
        final SendWorkRequest wr;
        final long seq;
        ByteBuffer payload;
        long psn;
        int rnrAttempts;

        SendWqe(SendWorkRequest wr, long seq) {
            this.wr = wr;
            this.seq = seq;
        }
    }

    final SoftProtectionDomain pd;
    final SoftDevice device;
    private final QpInitAttributes init;
    private final int qpn;
    private final SoftCompletionQueue sendCq;
    private final SoftCompletionQueue recvCq;
    private final SoftSharedReceiveQueue srq;
    private volatile QpState state = QpState.RESET;

    // attributes, written under both locks
    private volatile int portNum = 1;
    private int qkey;
    private Set<Access> qpAccess = Set.of();
    private int pathMtu = 4096;
    private int destQpn;
    private long rqPsn;
    private long sqPsn;
    private int maxDestRdAtomic;
    private int maxRdAtomic;
    private int minRnrTimer = 12;
    private int timeout = 14;
    private int retryCount = 7;
    private int rnrRetry = 7;
    private AddressVector path;
    private AddressVector alternatePath;
    private int alternatePortNum;
    private int alternateTimeout;
    private volatile MigrationState migrationState = MigrationState.MIGRATED;
    /** Set once this QP migrated on a failure, so its packets tell the responder to migrate too. */
    private boolean migratedOnce;

    /** The peer QP in this JVM, or null when the peer is reached through {@link #link}. */
    private volatile SoftQueuePair remote;
    private volatile LinkConnection link;
    private volatile boolean dropped;
    private volatile int failNextPostErrno;

    // requester, under sendLock
    private final ReentrantLock sendLock = new ReentrantLock();
    private final ArrayDeque<SendWqe> pending = new ArrayDeque<>();
    private final ArrayDeque<SendWqe> inflight = new ArrayDeque<>();
    private long nextPsn;
    private long nextSeq;
    private boolean pumping;
    private boolean rnrWait;
    private int retries;
    private ScheduledFuture<?> retransmitTimer;
    /** When a response last made progress; the timer fires on silence, not on every ack. */
    private long lastProgress;
    private final AtomicInteger sendSlots = new AtomicInteger();
    private final AtomicLong retiredSeq = new AtomicLong(-1);

    // responder, under recvLock
    private final ReentrantLock recvLock = new ReentrantLock();
    private final ArrayDeque<ReceiveWorkRequest> receives = new ArrayDeque<>();
    private long expectedPsn;
    private final Map<Long, Packet> atomicReplies = new LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, Packet> eldest) {
            return size() > 16;
        }
    };

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
            pump();
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
        Map<String, Object> set = new LinkedHashMap<>();
        set.put("port_num", a.portNum());
        set.put("pkey_index", a.pkeyIndex());
        set.put("path_mtu", a.pathMtu());
        set.put("dest_qp_num", a.destQpNum());
        set.put("rq_psn", a.rqPsn());
        set.put("sq_psn", a.sqPsn());
        set.put("max_dest_rd_atomic", a.maxDestRdAtomic());
        set.put("max_rd_atomic", a.maxRdAtomic());
        set.put("timeout", a.timeout());
        set.put("retry_cnt", a.retryCount());
        set.put("rnr_retry", a.rnrRetry());
        set.put("ah_attr", a.path());
        set.put("qkey", rc ? a.qkey() : null);
        set.put("access_flags", rc ? null : a.accessFlags());
        set.put("min_rnr_timer", rc ? null : a.minRnrTimer());
        set.put("alt_path", rc ? null : a.alternatePath());
        set.put("path_mig_state", rc ? null : a.migrationState());
        return set.entrySet().stream().filter(e -> e.getValue() != null).map(Map.Entry::getKey).toList();
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
            expectedPsn = 0;
        }
        if (a.rqPsn() != null) {
            rqPsn = a.rqPsn();
            expectedPsn = rqPsn;
        }
        if (a.sqPsn() != null) {
            sqPsn = a.sqPsn();
            nextPsn = sqPsn;
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
        if (to == QpState.SQD && inflight.isEmpty()) {
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
    }

    private void migrate() {
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
     * Enters ERR and flushes both queues. The caller holds sendLock and no recvLock.
     */
    private void enterError() {
        state = QpState.ERR;
        flushSends();
        recvLock.lock();
        try {
            flushReceives();
        } finally {
            recvLock.unlock();
        }
    }

    /** Enters ERR from the responder side (recvLock held): the send side is flushed by the timer thread. */
    private void responderError(AsyncEventType event) {
        state = QpState.ERR;
        flushReceives();
        if (event != null) {
            // after the NAK that goes with it reached the requester: on a wire the NAK outruns
            // whatever the responder's owner does about the event (a disconnect, say)
            fabric.onWire(() -> device.raise(new AsyncEvent.QpEvent(event, qpn)));
        }
        fabric.execute(() -> {
            sendLock.lock();
            try {
                flushSends();
            } finally {
                sendLock.unlock();
            }
        });
    }

    private void flushSends() {
        cancelRetransmit();
        rnrWait = false;
        SendWqe w;
        while ((w = inflight.poll()) != null) {
            pushSend(w, WcStatus.WR_FLUSH_ERR, 0);
        }
        while ((w = pending.poll()) != null) {
            pushSend(w, WcStatus.WR_FLUSH_ERR, 0);
        }
    }

    private void flushReceives() {
        ReceiveWorkRequest r;
        while ((r = receives.poll()) != null) {
            recvCq.push(WorkCompletion.error(r.wrId(), WcStatus.WR_FLUSH_ERR, qpn), this, -1, false);
        }
    }

    // ---------------------------------------------------------------- posting

    @Override
    public void postSend(SendWorkRequest... requests) {
        checkOpen("ibv_post_send");
        sendLock.lock();
        try {
            for (int i = 0; i < requests.length; i++) {
                VerbsException refused = admit(requests[i]);
                if (refused != null) {
                    throw new PostException(refused, i);
                }
                SendWqe w = new SendWqe(requests[i], nextSeq);
                if (requests[i].has(SendFlag.INLINE)) {
                    // inline data is copied at post time: the caller may reuse its buffer at once
                    w.payload = payload(requests[i].sgList(), true);
                    if (w.payload == null) {
                        throw new PostException(new InvalidRequestException("ibv_post_send",
                                "inline data must lie in registered memory"), i);
                    }
                }
                nextSeq++;
                sendSlots.incrementAndGet();
                pending.add(w);
            }
        } finally {
            try {
                // the requests before a refused one stay posted, so they go out (or flush) either way
                if (state == QpState.ERR) {
                    flushSends();
                } else {
                    pump();
                }
            } finally {
                sendLock.unlock();
            }
        }
    }

    private VerbsException admit(SendWorkRequest wr) {
        String call = "ibv_post_send";
        int errno = failNextPostErrno;
        if (errno != 0) {
            failNextPostErrno = 0;
            return VerbsException.of(call, errno, "refused by fault injection");
        }
        QpState s = state;
        if (s == QpState.RESET || s == QpState.INIT || s == QpState.RTR) {
            return new InvalidStateException(call, "the QP is in " + s + ", sends need RTS");
        }
        if (wr.sgList().size() > init.maxSendSge()) {
            return new InvalidRequestException(call, wr.sgList().size() + " SGEs, the QP takes " + init.maxSendSge());
        }
        if (wr.has(SendFlag.INLINE) && wr.totalLength() > init.maxInlineData()) {
            return new InvalidRequestException(call, wr.totalLength() + " inline bytes, the QP takes "
                    + init.maxInlineData());
        }
        if (init.type() == QpType.UD) {
            if (wr.opcode() != SendOpcode.SEND && wr.opcode() != SendOpcode.SEND_WITH_IMM) {
                return new InvalidRequestException(call, "a UD QP only sends");
            }
            if (wr.destination() == null || !(wr.destination().addressHandle() instanceof SoftAddressHandle)) {
                return new InvalidRequestException(call, "a UD send needs an address handle of this fabric");
            }
        } else if (wr.opcode().isAtomic() && (wr.sgList().size() != 1 || wr.sgList().get(0).length() != 8)) {
            return new InvalidRequestException(call, "an atomic takes one 8-byte SGE for its result");
        }
        if (sendSlots.get() >= init.maxSendWr()) {
            return new QueueFullException(call, "the send queue holds " + init.maxSendWr() + " requests");
        }
        return null;
    }

    @Override
    public void postReceive(ReceiveWorkRequest... requests) {
        checkOpen("ibv_post_recv");
        if (srq != null) {
            throw new PostException(new InvalidRequestException("ibv_post_recv",
                    "the QP takes its receives from an SRQ"), 0);
        }
        recvLock.lock();
        try {
            for (int i = 0; i < requests.length; i++) {
                ReceiveWorkRequest wr = requests[i];
                VerbsException refused = null;
                int errno = failNextPostErrno;
                if (errno != 0) {
                    failNextPostErrno = 0;
                    refused = VerbsException.of("ibv_post_recv", errno, "refused by fault injection");
                } else if (state == QpState.RESET) {
                    refused = new InvalidStateException("ibv_post_recv", "the QP is in RESET");
                } else if (wr.sgList().size() > init.maxRecvSge()) {
                    refused = new InvalidRequestException("ibv_post_recv", wr.sgList().size()
                            + " SGEs, the QP takes " + init.maxRecvSge());
                } else if (receives.size() >= init.maxRecvWr()) {
                    refused = new QueueFullException("ibv_post_recv", "the receive queue holds "
                            + init.maxRecvWr() + " requests");
                }
                if (refused != null) {
                    throw new PostException(refused, i);
                }
                receives.add(wr);
            }
            if (state == QpState.ERR) {
                flushReceives();
            }
        } finally {
            recvLock.unlock();
        }
    }

    void failNextPost(int errno) {
        failNextPostErrno = errno;
    }

    /** Polling a send completion frees its slot and those of the unsignaled sends before it. */
    void retireSend(long seq) {
        long previous = retiredSeq.getAndAccumulate(seq, Math::max);
        if (seq > previous) {
            sendSlots.addAndGet((int) -(seq - previous));
        }
    }

    // ---------------------------------------------------------------- requester

    /** Transmits pending requests in order. The caller holds sendLock. */
    private void pump() {
        if (pumping) {
            return;
        }
        pumping = true;
        try {
            while (!pending.isEmpty() && !rnrWait && state == QpState.RTS) {
                SendWqe w = pending.poll();
                if (w.payload == null && needsPayload(w.wr.opcode())) {
                    w.payload = payload(w.wr.sgList(), false);
                    if (w.payload == null) {
                        pushSend(w, WcStatus.LOC_PROT_ERR, 0);
                        enterError();
                        return;
                    }
                }
                if (init.type() == QpType.UD) {
                    // in flight until the wire carried it, so a flush meanwhile completes it once
                    inflight.add(w);
                    fabric.onWire(() -> carryDatagram(w));
                    continue;
                }
                w.psn = nextPsn++;
                inflight.add(w);
                transmit(w);
            }
        } finally {
            pumping = false;
        }
        armRetransmit();
    }

    private static boolean needsPayload(SendOpcode op) {
        return op != SendOpcode.RDMA_READ && !op.isAtomic();
    }

    private void transmit(SendWqe w) {
        SendWorkRequest wr = w.wr;
        int flags = (wr.has(SendFlag.SOLICITED) ? Packet.SOLICITED : 0) | (wr.opcode().hasImmediate() ? Packet.WITH_IMM : 0)
                | (migratedOnce ? Packet.MIGRATED : 0);
        int length = wr.opcode() == SendOpcode.RDMA_READ ? (int) wr.totalLength() : 0;
        if (!pathUp() && !(migrationState == MigrationState.ARMED && migrateOnFailure())) {
            return; // lost: the retransmit timer will notice
        }
        Packet p = new Packet(Packet.Kind.REQUEST, w.psn, wr.opcode().ordinal(), flags, wr.immData(), wr.remoteAddress(),
                wr.rkey(), length, wr.compareAdd(), wr.swap(), 0, destinationPort(), w.payload);
        LinkConnection tcp = link;
        if (tcp != null) {
            tcp.send(p);
            return;
        }
        SoftQueuePair peer = remote;
        if (peer != null && !peer.dropped) {
            // the request runs after the post returned, as a device runs it: the buffer is the fabric's until the completion
            fabric.onWire(() -> {
                if (!peer.dropped) {
                    Packet response = peer.onRequest(p);
                    if (response != null) {
                        onResponse(response);
                    }
                }
            });
        }
    }

    private boolean migrateOnFailure() {
        migrate();
        migratedOnce = true;
        device.raise(new AsyncEvent.QpEvent(AsyncEventType.PATH_MIG, qpn));
        if (pathUp()) {
            return true;
        }
        device.raise(new AsyncEvent.QpEvent(AsyncEventType.PATH_MIG_ERR, qpn));
        return false;
    }

    private boolean pathUp() {
        if (dropped || !device.port(portNum, "transmit").isUp()) {
            return false;
        }
        SoftQueuePair peer = remote;
        if (peer == null || path == null) {
            return link != null;
        }
        SoftPort far = peer.device.portFor(path.dgid());
        return far != null && far.isUp();
    }

    private int destinationPort() {
        byte[] gid = path == null ? null : path.dgid();
        return gid == null ? 1 : gid[15];
    }

    /** Handles a response from the responder: acks, read data, atomic results and NAKs. */
    void onResponse(Packet r) {
        sendLock.lock();
        try {
            if (state == QpState.ERR || state == QpState.RESET || inflight.isEmpty()) {
                return;
            }
            switch (r.kind()) {
                case ACK:
                    completeThrough(r.psn());
                    break;
                case READ_RESPONSE:
                case ATOMIC_RESPONSE:
                    completeThrough(r.psn() - 1);
                    SendWqe head = inflight.peek();
                    if (head != null && head.psn == r.psn()) {
                        inflight.poll();
                        ByteBuffer data = r.kind() == Packet.Kind.ATOMIC_RESPONSE
                                ? ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(0, r.compareAdd())
                                : r.data();
                        if (!scatter(head.wr.sgList(), data)) {
                            pushSend(head, WcStatus.LOC_PROT_ERR, 0);
                            enterError();
                            return;
                        }
                        pushSend(head, WcStatus.SUCCESS, data.remaining());
                    }
                    break;
                case NAK_RNR:
                    completeThrough(r.psn() - 1);
                    SendWqe waiting = inflight.peek();
                    if (waiting == null || waiting.psn != r.psn()) {
                        break;
                    }
                    waiting.rnrAttempts++;
                    if (rnrRetry != 7 && waiting.rnrAttempts > rnrRetry) {
                        inflight.poll();
                        pushSend(waiting, WcStatus.RNR_RETRY_EXC_ERR, 0);
                        enterError();
                        return;
                    }
                    rewind();
                    rnrWait = true;
                    schedule(this::resumeAfterRnr, r.status());
                    break;
                case NAK_ERROR:
                    completeThrough(r.psn() - 1);
                    SendWqe failed = inflight.poll();
                    if (failed != null) {
                        pushSend(failed, WcStatus.fromCode((int) r.status()), 0);
                    }
                    enterError();
                    return;
                default:
                    return;
            }
            retries = 0;
            lastProgress = System.nanoTime();
            pump();
        } finally {
            sendLock.unlock();
        }
    }

    private void completeThrough(long psn) {
        SendWqe w;
        while ((w = inflight.peek()) != null && w.psn <= psn && needsPayload(w.wr.opcode())) {
            inflight.poll();
            pushSend(w, WcStatus.SUCCESS, 0);
        }
    }

    /** Puts every request in flight back in front of the pending ones, to send again in order. */
    private void rewind() {
        SendWqe w;
        while ((w = inflight.pollLast()) != null) {
            if (!w.wr.has(SendFlag.INLINE)) {
                // the HCA reads the SGEs again for each try: a region deregistered meanwhile fails it
                w.payload = null;
            }
            pending.addFirst(w);
        }
        if (!pending.isEmpty()) {
            nextPsn = pending.peek().psn;
        }
    }

    private void resumeAfterRnr() {
        sendLock.lock();
        try {
            rnrWait = false;
            pump();
        } finally {
            sendLock.unlock();
        }
    }

    private void armRetransmit() {
        // UD is unreliable: a datagram in flight is never sent again
        if (inflight.isEmpty() || retransmitTimer != null || timeout == 0 || isClosed() || init.type() == QpType.UD) {
            return;
        }
        lastProgress = System.nanoTime();
        retransmitTimer = schedule(this::onRetransmitTimeout, transportTimeoutNanos());
    }

    /**
     * 4.096 us * 2^timeout (IB spec), at least 20 ms: the soft wire is a thread the OS schedules,
     * and on a loaded machine it may not run for milliseconds, where an HCA's engine would.
     */
    private long transportTimeoutNanos() {
        return Math.max(20_000_000L, (long) (4096.0 * (1L << Math.min(timeout, 31))));
    }

    private ScheduledFuture<?> schedule(Runnable task, long nanos) {
        try {
            return fabric.timer.schedule(task, nanos, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            return null; // the fabric is closing and flushes this QP itself
        }
    }

    private void cancelRetransmit() {
        if (retransmitTimer != null) {
            retransmitTimer.cancel(false);
            retransmitTimer = null;
        }
    }

    private void onRetransmitTimeout() {
        sendLock.lock();
        try {
            retransmitTimer = null;
            if (inflight.isEmpty() || state != QpState.RTS && state != QpState.SQD) {
                return;
            }
            long quiet = System.nanoTime() - lastProgress;
            if (quiet < transportTimeoutNanos()) {
                // responses kept coming: wait out the rest of a full timeout of silence
                retransmitTimer = schedule(this::onRetransmitTimeout, transportTimeoutNanos() - quiet);
                return;
            }
            if (++retries > retryCount) {
                pushSend(inflight.poll(), WcStatus.RETRY_EXC_ERR, 0);
                enterError();
                return;
            }
            rewind();
            pump();
        } finally {
            sendLock.unlock();
        }
    }

    private void pushSend(SendWqe w, WcStatus status, int byteLen) {
        boolean signaled = w.wr.has(SendFlag.SIGNALED) || init.signalAll();
        if (status == WcStatus.SUCCESS && !signaled) {
            return; // its slot is freed when a later signaled completion is polled
        }
        WorkCompletion wc = status == WcStatus.SUCCESS
                ? new WorkCompletion(w.wr.wrId(), status, w.wr.opcode().completion(), 0, byteLen, 0, 0, qpn, 0)
                : WorkCompletion.error(w.wr.wrId(), status, qpn);
        if (!sendCq.push(wc, this, w.seq, false) && state != QpState.ERR) {
            state = QpState.ERR;
            fabric.execute(() -> {
                sendLock.lock();
                try {
                    enterError();
                } finally {
                    sendLock.unlock();
                }
            });
        }
    }

    /**
     * The wire's turn for a datagram: delivered or dropped, then completed. Nothing happens when
     * the QP flushed it meanwhile (it is no longer the oldest in flight).
     */
    private void carryDatagram(SendWqe w) {
        sendLock.lock();
        try {
            if (inflight.peek() != w) {
                return;
            }
            inflight.poll();
            sendDatagram(w);
        } finally {
            sendLock.unlock();
        }
    }

    private void sendDatagram(SendWqe w) {
        SendWorkRequest.UdDestination dest = w.wr.destination();
        AddressVector av = dest.addressHandle().addressVector();
        if (w.payload.remaining() > Math.min(pathMtu, SoftDevice.MTU)) {
            pushSend(w, WcStatus.LOC_LEN_ERR, 0);
            return;
        }
        SoftPort local = device.ports[Math.max(1, Math.min(2, av.portNum())) - 1];
        byte[] sgid = local.gid;
        int qkeyToUse = dest.remoteQkey() < 0 ? qkey : dest.remoteQkey();
        int imm = w.wr.opcode().hasImmediate() ? Packet.WITH_IMM : 0;
        if (local.isUp()) {
            if (dest.remoteQpn() == SoftFabric.MULTICAST_QPN) {
                // every attached QP receives, the sender too: IB and RoCE loop multicast back by default
                for (SoftQueuePair member : fabric.multicastMembers(av.dgid())) {
                    member.onDatagram(w.payload, imm, w.wr.immData(), qpn, sgid, av.dgid(), qkeyToUse);
                }
            } else {
                SoftPort far = fabric.portFor(av.dgid());
                SoftQueuePair target = far == null || !far.isUp() ? null : far.device.queuePair(dest.remoteQpn());
                if (target != null) {
                    target.onDatagram(w.payload, imm, w.wr.immData(), qpn, sgid, av.dgid(), qkeyToUse);
                }
            }
        }
        pushSend(w, WcStatus.SUCCESS, 0); // UD is unreliable: a lost datagram still completes
    }

    // ---------------------------------------------------------------- responder

    /** Executes an incoming request; returns the response, or null when the packet is dropped. */
    Packet onRequest(Packet p) {
        recvLock.lock();
        try {
            QpState s = state;
            if (s != QpState.RTR && s != QpState.RTS && s != QpState.SQD && s != QpState.SQE) {
                return null;
            }
            if (p.port() >= 1 && p.port() <= device.ports.length && !device.ports[p.port() - 1].isUp()) {
                return null;
            }
            if ((p.flags() & Packet.MIGRATED) != 0 && migrationState == MigrationState.ARMED) {
                migrate();
                device.raise(new AsyncEvent.QpEvent(AsyncEventType.PATH_MIG, qpn));
            }
            SendOpcode op = Packet.OPCODES[p.opcode()];
            if (p.psn() < expectedPsn) {
                return duplicate(p, op);
            }
            if (p.psn() > expectedPsn) {
                return null; // out of sequence: the requester retransmits in order
            }
            Packet response = execute(p, op);
            if (response != null && response.kind() != Packet.Kind.NAK_RNR && response.kind() != Packet.Kind.NAK_ERROR) {
                expectedPsn++;
            }
            return response;
        } finally {
            recvLock.unlock();
        }
    }

    private Packet duplicate(Packet p, SendOpcode op) {
        if (op == SendOpcode.RDMA_READ) {
            return execute(p, op);
        }
        if (op.isAtomic()) {
            return atomicReplies.get(p.psn());
        }
        return Packet.ack(p.psn());
    }

    private Packet execute(Packet p, SendOpcode op) {
        if ((op == SendOpcode.RDMA_READ || op.isAtomic()) && maxDestRdAtomic == 0) {
            // no responder resources to hold a read or atomic: rxe NAKs it as an invalid request
            responderError(AsyncEventType.QP_REQ_ERR);
            return Packet.errorNak(p.psn(), WcStatus.REM_INV_REQ_ERR.code());
        }
        switch (op) {
            case SEND:
            case SEND_WITH_IMM: {
                ReceiveWorkRequest recv = takeReceive();
                if (recv == null) {
                    return Packet.rnrNak(p.psn(), RNR_TIMER_MICROS[minRnrTimer] * 1000L);
                }
                if (p.data().remaining() > recv.totalLength()) {
                    pushRecv(WorkCompletion.error(recv.wrId(), WcStatus.LOC_LEN_ERR, qpn), false);
                    responderError(null);
                    return Packet.errorNak(p.psn(), WcStatus.REM_INV_REQ_ERR.code());
                }
                if (!scatter(recv.sgList(), p.data())) {
                    pushRecv(WorkCompletion.error(recv.wrId(), WcStatus.LOC_PROT_ERR, qpn), false);
                    responderError(null);
                    return Packet.errorNak(p.psn(), WcStatus.REM_OP_ERR.code());
                }
                boolean imm = (p.flags() & Packet.WITH_IMM) != 0;
                pushRecv(new WorkCompletion(recv.wrId(), WcStatus.SUCCESS, WcOpcode.RECV, 0, p.data().remaining(),
                        imm ? p.immData() : 0, imm ? WorkCompletion.WITH_IMM : 0, qpn, 0),
                        (p.flags() & Packet.SOLICITED) != 0);
                return Packet.ack(p.psn());
            }
            case RDMA_WRITE:
            case RDMA_WRITE_WITH_IMM: {
                int len = p.data().remaining();
                SoftMemoryRegion mr = remoteRegion(p.rkey(), p.remoteAddress(), len, Access.REMOTE_WRITE);
                if (mr == null && len > 0) {
                    return accessError(p);
                }
                ReceiveWorkRequest recv = null;
                if (op == SendOpcode.RDMA_WRITE_WITH_IMM) {
                    recv = takeReceive();
                    if (recv == null) {
                        return Packet.rnrNak(p.psn(), RNR_TIMER_MICROS[minRnrTimer] * 1000L);
                    }
                }
                if (len > 0) {
                    mr.write(p.remoteAddress(), p.data(), p.data().position(), len);
                }
                if (recv != null) {
                    pushRecv(new WorkCompletion(recv.wrId(), WcStatus.SUCCESS, WcOpcode.RECV_RDMA_WITH_IMM, 0, len,
                            p.immData(), WorkCompletion.WITH_IMM, qpn, 0), (p.flags() & Packet.SOLICITED) != 0);
                }
                return Packet.ack(p.psn());
            }
            case RDMA_READ: {
                SoftMemoryRegion mr = remoteRegion(p.rkey(), p.remoteAddress(), p.length(), Access.REMOTE_READ);
                if (mr == null && p.length() > 0) {
                    return accessError(p);
                }
                // read where it lies when the response goes out, as the responder's HCA does
                ByteBuffer data = p.length() > 0 ? mr.view(p.remoteAddress(), p.length()) : ByteBuffer.allocate(0);
                return Packet.readResponse(p.psn(), data);
            }
            case ATOMIC_CMP_AND_SWP:
            case ATOMIC_FETCH_AND_ADD: {
                SoftMemoryRegion mr = remoteRegion(p.rkey(), p.remoteAddress(), 8, Access.REMOTE_ATOMIC);
                if (mr == null) {
                    return accessError(p);
                }
                if ((p.remoteAddress() & 7) != 0) {
                    responderError(AsyncEventType.QP_REQ_ERR);
                    return Packet.errorNak(p.psn(), WcStatus.REM_INV_REQ_ERR.code());
                }
                long original;
                synchronized (device.atomicLock) {
                    original = mr.getLong(p.remoteAddress());
                    if (op == SendOpcode.ATOMIC_FETCH_AND_ADD) {
                        mr.putLong(p.remoteAddress(), original + p.compareAdd());
                    } else if (original == p.compareAdd()) {
                        mr.putLong(p.remoteAddress(), p.swap());
                    }
                }
                Packet reply = Packet.atomicResponse(p.psn(), original);
                atomicReplies.put(p.psn(), reply);
                return reply;
            }
            default:
                throw new AssertionError(op);
        }
    }

    private Packet accessError(Packet p) {
        responderError(AsyncEventType.QP_ACCESS_ERR);
        return Packet.errorNak(p.psn(), WcStatus.REM_ACCESS_ERR.code());
    }

    /** The region an rkey names, if it covers the range and grants the right; else null. */
    private SoftMemoryRegion remoteRegion(int rkey, long address, long length, Access right) {
        SoftMemoryRegion mr = device.memoryRegion(rkey);
        if (mr == null || mr.pd != pd || mr.isClosed() || !mr.covers(address, length) || !mr.access().contains(right)
                || !qpAccess.contains(right)) {
            return null;
        }
        return mr;
    }

    private ReceiveWorkRequest takeReceive() {
        return srq != null ? srq.take() : receives.poll();
    }

    private void pushRecv(WorkCompletion wc, boolean solicited) {
        if (!recvCq.push(wc, this, -1, solicited)) {
            responderError(null);
        }
    }

    /** A UD datagram for this QP: dropped unless it is a UD QP, the Q_Key matches and a receive is posted. */
    void onDatagram(ByteBuffer data, int immFlag, int immData, int srcQpn, byte[] sgid, byte[] dgid, int qkeyUsed) {
        if (init.type() != QpType.UD) {
            return; // a connected QP takes only its own transport's packets
        }
        recvLock.lock();
        try {
            if (state != QpState.RTR && state != QpState.RTS || qkeyUsed != qkey || !device.ports[portNum - 1].isUp()) {
                return;
            }
            ReceiveWorkRequest recv = takeReceive();
            if (recv == null) {
                return;
            }
            int length = data.remaining();
            if (length + GRH_BYTES > recv.totalLength()) {
                pushRecv(WorkCompletion.error(recv.wrId(), WcStatus.LOC_LEN_ERR, qpn), false);
                return;
            }
            byte[] full = new byte[GRH_BYTES + length];
            full[0] = 0x60; // IPv6 version field: RoCE v2 uses an IPv4 header here, IB a GRH
            System.arraycopy(sgid, 0, full, 8, 16);
            System.arraycopy(dgid, 0, full, 24, 16);
            data.get(data.position(), full, GRH_BYTES, length);
            if (!scatter(recv.sgList(), ByteBuffer.wrap(full))) {
                pushRecv(WorkCompletion.error(recv.wrId(), WcStatus.LOC_PROT_ERR, qpn), false);
                return;
            }
            pushRecv(new WorkCompletion(recv.wrId(), WcStatus.SUCCESS, WcOpcode.RECV, 0, full.length,
                    immFlag != 0 ? immData : 0, WorkCompletion.GRH | immFlag, qpn, srcQpn), false);
        } finally {
            recvLock.unlock();
        }
    }

    // ---------------------------------------------------------------- local memory

    /**
     * The bytes the SGEs name; null when one is not in registered memory of this PD. One SGE is
     * read where it lies when the packet goes out, as an HCA reads it by DMA (the poster may not
     * touch it before the completion); inline data, and several SGEs, are copied now.
     */
    private ByteBuffer payload(List<ScatterGatherElement> sgl, boolean copy) {
        if (!copy && sgl.size() == 1) {
            ScatterGatherElement sge = sgl.get(0);
            SoftMemoryRegion mr = localRegion(sge, false);
            return mr == null ? null : mr.view(sge.address(), sge.length());
        }
        long total = 0;
        for (ScatterGatherElement sge : sgl) {
            total += sge.length();
        }
        if (total > Integer.MAX_VALUE) {
            return null;
        }
        byte[] data = new byte[(int) total];
        int off = 0;
        for (ScatterGatherElement sge : sgl) {
            SoftMemoryRegion mr = localRegion(sge, false);
            if (mr == null) {
                return null;
            }
            mr.read(sge.address(), data, off, sge.length());
            off += sge.length();
        }
        return ByteBuffer.wrap(data);
    }

    /** Writes data across the SGEs; false when one is not writable registered memory of this PD. */
    private boolean scatter(List<ScatterGatherElement> sgl, ByteBuffer data) {
        int off = data.position();
        for (ScatterGatherElement sge : sgl) {
            if (off >= data.limit()) {
                break;
            }
            SoftMemoryRegion mr = localRegion(sge, true);
            if (mr == null) {
                return false;
            }
            int n = Math.min(sge.length(), data.limit() - off);
            mr.write(sge.address(), data, off, n);
            off += n;
        }
        return true;
    }

    private SoftMemoryRegion localRegion(ScatterGatherElement sge, boolean write) {
        SoftMemoryRegion mr = device.memoryRegion(sge.lkey());
        if (mr == null || mr.pd != pd || mr.isClosed() || !mr.covers(sge.address(), sge.length())
                || (write && !mr.access().contains(Access.LOCAL_WRITE))) {
            return null;
        }
        return mr;
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
            cancelRetransmit();
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
