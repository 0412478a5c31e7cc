package io.rdmaactors.soft;

import io.rdmaactors.cm.AsyncEvent;
import io.rdmaactors.cm.AsyncEventType;
import io.rdmaactors.soft.wire.Packet;
import io.rdmaactors.verbs.Access;
import io.rdmaactors.verbs.InvalidRequestException;
import io.rdmaactors.verbs.InvalidStateException;
import io.rdmaactors.verbs.MigrationState;
import io.rdmaactors.verbs.PostException;
import io.rdmaactors.verbs.QpState;
import io.rdmaactors.verbs.QpType;
import io.rdmaactors.verbs.QueueFullException;
import io.rdmaactors.verbs.ReceiveWorkRequest;
import io.rdmaactors.verbs.SendOpcode;
import io.rdmaactors.verbs.VerbsException;
import io.rdmaactors.verbs.WcOpcode;
import io.rdmaactors.verbs.WcStatus;
import io.rdmaactors.verbs.WorkCompletion;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The responder of a soft QP, as rxe_resp.c is rxe's: checks each incoming request (PSN, rkey,
 * bounds, access rights, responder resources), executes SEND, WRITE, READ and atomics, answers
 * with an ACK, a response or a NAK, and takes UD datagrams into posted receives. It owns the
 * receive queue: posted to without a lock, as a device's receive queue takes WQEs while the
 * device consumes others, and taken from under the QP's recvLock.
 */
final class SoftResponder {

    private static final int GRH_BYTES = 40;
    /** IB spec table 45: RNR NAK timer field to microseconds (index 0 is 655.36 ms). */
    private static final int[] RNR_TIMER_MICROS = {655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640,
        960, 1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720, 40960, 61440, 81920, 122880, 163840,
        245760, 327680, 491520};

    private final SoftQueuePair qp;
    private final SoftDevice device;
    /**
     * Posted receives, oldest first. ibv_post_recv adds without recvLock: a poster never waits
     * while a request is executed (nor parks behind it, which costs more than the request).
     */
    private final ConcurrentLinkedQueue<ReceiveWorkRequest> receives = new ConcurrentLinkedQueue<>();
    /** Receives posted and not yet taken, counted as admitted: the queue's fill and an ACK's credits. */
    private final AtomicInteger posted = new AtomicInteger();
    private long expectedPsn;
    /** The async event of the fault the request just executed met, raised by {@link #responded()}. */
    private AsyncEventType raiseAfterResponse;
    /** The last atomics' results by PSN: a duplicate atomic gets its first answer, never runs twice. */
    private final Map<Long, Packet> atomicReplies = new LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, Packet> eldest) {
            return size() > 16;
        }
    };

    SoftResponder(SoftQueuePair qp) {
        this.qp = qp;
        this.device = qp.device;
    }

    /** The rq PSN the QP was given: the next request it takes must carry it. */
    void expect(long psn) {
        expectedPsn = psn;
    }

    /** ibv_post_recv. */
    void post(ReceiveWorkRequest... requests) {
        if (qp.srq != null) {
            throw new PostException(new InvalidRequestException("ibv_post_recv",
                    "the QP takes its receives from an SRQ"), 0);
        }
        try {
            for (int i = 0; i < requests.length; i++) {
                VerbsException refused = admit(requests[i]);
                if (refused != null) {
                    throw new PostException(refused, i);
                }
                receives.add(requests[i]);
            }
        } finally {
            // the requests before a refused one stay posted: flushed too when the QP is in error
            flushIfInError();
        }
    }

    /**
     * After a post: a QP in ERR (or past it, in RESET) completes its receives with a flush, and
     * one that entered it while they were added may have flushed before they were there. The
     * state is read after the adds, as enterError writes it before it flushes, so one of the two
     * flushes finds each receive.
     */
    private void flushIfInError() {
        if (qp.transmits()) {
            return;
        }
        qp.recvLock.lock();
        try {
            if (!qp.transmits()) {
                flush();
            }
        } finally {
            qp.recvLock.unlock();
        }
    }

    private VerbsException admit(ReceiveWorkRequest wr) {
        String call = "ibv_post_recv";
        VerbsException injected = qp.injectedRefusal(call);
        if (injected != null) {
            return injected;
        }
        if (qp.state == QpState.RESET) {
            return new InvalidStateException(call, "the QP is in RESET");
        }
        if (wr.sgList().size() > qp.init.maxRecvSge()) {
            return new InvalidRequestException(call, wr.sgList().size() + " SGEs, the QP takes "
                    + qp.init.maxRecvSge());
        }
        for (int n = posted.get(); ; n = posted.get()) {
            if (n >= qp.init.maxRecvWr()) {
                return new QueueFullException(call, "the receive queue holds " + qp.init.maxRecvWr() + " requests");
            }
            if (posted.compareAndSet(n, n + 1)) {
                return null; // its place is taken: the caller adds it
            }
        }
    }

    /**
     * The response to the request just executed went on its way (handed to the requester, or
     * queued on its link behind every frame before it): the async event of the fault it reports
     * follows it now, so that the NAK outruns whatever the event's handler does (a disconnect, say),
     * as on a wire. By the thread that called {@link #onRequest}.
     */
    void responded() {
        AsyncEventType event = raiseAfterResponse;
        if (event != null) {
            raiseAfterResponse = null;
            device.raise(new AsyncEvent.QpEvent(event, qp.qpNum()));
        }
    }

    /**
     * Executes an incoming request; returns the response, or null when the packet is dropped. The
     * caller hands the response on, then calls {@link #responded()}.
     */
    Packet onRequest(Packet p) {
        qp.recvLock.lock();
        try {
            QpState s = qp.state;
            if (s != QpState.RTR && s != QpState.RTS && s != QpState.SQD && s != QpState.SQE) {
                return null;
            }
            if (p.port() >= 1 && p.port() <= device.ports.length && !device.ports[p.port() - 1].isUp()) {
                return null;
            }
            if ((p.flags() & Packet.MIGRATED) != 0 && qp.migrationState == MigrationState.ARMED) {
                qp.migrate();
                device.raise(new AsyncEvent.QpEvent(AsyncEventType.PATH_MIG, qp.qpNum()));
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
            qp.recvLock.unlock();
        }
    }

    private Packet duplicate(Packet p, SendOpcode op) {
        if (op == SendOpcode.RDMA_READ) {
            return execute(p, op);
        }
        if (op.isAtomic()) {
            return atomicReplies.get(p.psn());
        }
        return Packet.ack(p.psn(), credits());
    }

    private Packet execute(Packet p, SendOpcode op) {
        if ((op == SendOpcode.RDMA_READ || op.isAtomic()) && qp.maxDestRdAtomic == 0) {
            // no responder resources to hold a read or atomic: rxe NAKs it as an invalid request
            fail(AsyncEventType.QP_REQ_ERR);
            return Packet.errorNak(p.psn(), WcStatus.REM_INV_REQ_ERR.code());
        }
        switch (op) {
            case SEND:
            case SEND_WITH_IMM: {
                ReceiveWorkRequest recv = takeReceive();
                if (recv == null) {
                    return Packet.rnrNak(p.psn(), RNR_TIMER_MICROS[qp.minRnrTimer] * 1000L);
                }
                if (p.data().remaining() > recv.totalLength()) {
                    complete(WorkCompletion.error(recv.wrId(), WcStatus.LOC_LEN_ERR, qp.qpNum()), false);
                    fail(null);
                    return Packet.errorNak(p.psn(), WcStatus.REM_INV_REQ_ERR.code());
                }
                if (!qp.pd.scatter(recv.sgList(), p.data())) {
                    complete(WorkCompletion.error(recv.wrId(), WcStatus.LOC_PROT_ERR, qp.qpNum()), false);
                    fail(null);
                    return Packet.errorNak(p.psn(), WcStatus.REM_OP_ERR.code());
                }
                boolean imm = (p.flags() & Packet.WITH_IMM) != 0;
                complete(new WorkCompletion(recv.wrId(), WcStatus.SUCCESS, WcOpcode.RECV, 0, p.data().remaining(),
                        imm ? p.immData() : 0, imm ? WorkCompletion.WITH_IMM : 0, qp.qpNum(), 0),
                        (p.flags() & Packet.SOLICITED) != 0);
                return Packet.ack(p.psn(), credits());
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
                        return Packet.rnrNak(p.psn(), RNR_TIMER_MICROS[qp.minRnrTimer] * 1000L);
                    }
                }
                if (len > 0) {
                    mr.write(p.remoteAddress(), p.data(), p.data().position(), len);
                }
                if (recv != null) {
                    complete(new WorkCompletion(recv.wrId(), WcStatus.SUCCESS, WcOpcode.RECV_RDMA_WITH_IMM, 0, len,
                            p.immData(), WorkCompletion.WITH_IMM, qp.qpNum(), 0), (p.flags() & Packet.SOLICITED) != 0);
                }
                return Packet.ack(p.psn(), credits());
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
                    fail(AsyncEventType.QP_REQ_ERR);
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
        fail(AsyncEventType.QP_ACCESS_ERR);
        return Packet.errorNak(p.psn(), WcStatus.REM_ACCESS_ERR.code());
    }

    /**
     * The region an rkey names, if it covers the range and grants the right; else null. The rule
     * for every remote access (WRITE, READ, atomic): the key names a live region of this QP's PD,
     * or a memory window bound to this QP under that key, the range lies inside it, and both the
     * region (or window) and the QP's access flags grant the right.
     */
    private SoftMemoryRegion remoteRegion(int rkey, long address, long length, Access right) {
        SoftMemoryRegion mr = device.memoryRegion(rkey);
        if (mr == null) {
            SoftMemoryWindow mw = device.memoryWindow(rkey);
            mr = mw == null ? null : mw.grants(qp, rkey, address, length, right);
            return mr == null || !qp.qpAccess.contains(right) ? null : mr;
        }
        if (mr.pd != qp.pd || mr.isClosed() || !mr.covers(address, length)
                || !mr.access().contains(right) || !qp.qpAccess.contains(right)) {
            return null;
        }
        return mr;
    }

    private ReceiveWorkRequest takeReceive() {
        if (qp.srq != null) {
            return qp.srq.take();
        }
        ReceiveWorkRequest r = receives.poll();
        if (r != null) {
            posted.decrementAndGet();
        }
        return r;
    }

    /**
     * The credits an ACK carries (IB end-to-end flow control): the receives still posted, so the
     * requester sends no more Sends than they take. A QP on an SRQ has none of its own to count.
     */
    private int credits() {
        return qp.srq != null ? Packet.UNLIMITED_CREDITS : posted.get();
    }

    private void complete(WorkCompletion wc, boolean solicited) {
        if (!qp.recvCq.push(wc, qp, -1, solicited)) {
            fail(null);
        }
    }

    /** A UD datagram for this QP: dropped unless it is a UD QP, the Q_Key matches and a receive is posted. */
    void onDatagram(ByteBuffer data, int immFlag, int immData, int srcQpn, byte[] sgid, byte[] dgid, int qkeyUsed) {
        if (qp.init.type() != QpType.UD) {
            return; // a connected QP takes only its own transport's packets
        }
        qp.recvLock.lock();
        try {
            if (qp.state != QpState.RTR && qp.state != QpState.RTS || qkeyUsed != qp.qkey
                    || !device.ports[qp.portNum - 1].isUp()) {
                return;
            }
            ReceiveWorkRequest recv = takeReceive();
            if (recv == null) {
                return;
            }
            int length = data.remaining();
            if (length + GRH_BYTES > recv.totalLength()) {
                complete(WorkCompletion.error(recv.wrId(), WcStatus.LOC_LEN_ERR, qp.qpNum()), false);
                return;
            }
            byte[] full = new byte[GRH_BYTES + length];
            full[0] = 0x60; // IPv6 version field: RoCE v2 uses an IPv4 header here, IB a GRH
            System.arraycopy(sgid, 0, full, 8, 16);
            System.arraycopy(dgid, 0, full, 24, 16);
            data.get(data.position(), full, GRH_BYTES, length);
            if (!qp.pd.scatter(recv.sgList(), ByteBuffer.wrap(full))) {
                complete(WorkCompletion.error(recv.wrId(), WcStatus.LOC_PROT_ERR, qp.qpNum()), false);
                return;
            }
            complete(new WorkCompletion(recv.wrId(), WcStatus.SUCCESS, WcOpcode.RECV, 0, full.length,
                    immFlag != 0 ? immData : 0, WorkCompletion.GRH | immFlag, qp.qpNum(), srcQpn), false);
        } finally {
            qp.recvLock.unlock();
        }
    }

    /**
     * Enters ERR from the responder side (recvLock held): the send side is flushed by the timer
     * thread; the event is raised once the request's NAK is on its way ({@link #responded()}).
     */
    private void fail(AsyncEventType event) {
        qp.state = QpState.ERR;
        flush();
        if (event != null) {
            raiseAfterResponse = event;
        }
        qp.fabric.execute(() -> {
            qp.sendLock.lock();
            try {
                qp.completer.flush();
            } finally {
                qp.sendLock.unlock();
            }
        });
    }

    /** Completes every posted receive with WR_FLUSH_ERR. The caller holds recvLock. */
    void flush() {
        ReceiveWorkRequest r;
        while ((r = receives.poll()) != null) {
            posted.decrementAndGet();
            qp.recvCq.push(WorkCompletion.error(r.wrId(), WcStatus.WR_FLUSH_ERR, qp.qpNum()), qp, -1, false);
        }
    }
}
