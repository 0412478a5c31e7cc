package io.rdmaactors.soft;

import io.rdmaactors.cm.AddressVector;
import io.rdmaactors.cm.AsyncEvent;
import io.rdmaactors.cm.AsyncEventType;
import io.rdmaactors.soft.link.LinkConnection;
import io.rdmaactors.soft.wire.Packet;
import io.rdmaactors.verbs.InvalidRequestException;
import io.rdmaactors.verbs.InvalidStateException;
import io.rdmaactors.verbs.MigrationState;
import io.rdmaactors.verbs.PostException;
import io.rdmaactors.verbs.QpState;
import io.rdmaactors.verbs.QpType;
import io.rdmaactors.verbs.QueueFullException;
import io.rdmaactors.verbs.ResourceClosedException;
import io.rdmaactors.verbs.SendFlag;
import io.rdmaactors.verbs.SendOpcode;
import io.rdmaactors.verbs.SendWorkRequest;
import io.rdmaactors.verbs.VerbsException;
import io.rdmaactors.verbs.WcStatus;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The requester of a soft QP, as rxe_req.c is rxe's: takes posted sends, gives them PSNs, puts
 * them on the wire (or on the path's link) in order (a fenced one once every READ and atomic
 * before it completed), sends them again after an RNR NAK or a
 * transport timeout, and migrates to the alternate path when the primary one is lost. Its
 * queues are guarded by the QP's sendLock; the {@link SoftCompleter} retires them.
 */
final class SoftRequester {

    private static final Logger log = LoggerFactory.getLogger(SoftRequester.class);

    /** A send work request on its way: its payload, PSN once transmitted. */
    static final class SendWqe {
        final SendWorkRequest wr;
        final long seq;
        ByteBuffer payload;
        long psn;
        int rnrAttempts;
        /** A bind or invalidation that ran (once, even if a rewind sends it round again). */
        boolean ran;
        /** Why the bind or invalidation failed; null when it took effect. */
        WcStatus localFailure;

        SendWqe(SendWorkRequest wr, long seq) {
            this.wr = wr;
            this.seq = seq;
        }
    }

    /** The credits of a responder that takes its receives from an SRQ: no end-to-end limit. */
    private static final int UNLIMITED = Integer.MAX_VALUE;

    private final SoftQueuePair qp;
    private final SoftFabric fabric;
    private final ArrayDeque<SendWqe> pending = new ArrayDeque<>(2);
    /** Sent and not yet answered, oldest first: the completer retires them from the head. */
    final ArrayDeque<SendWqe> inflight = new ArrayDeque<>(2);
    private long nextPsn;
    private long nextSeq;
    private boolean pumping;
    private boolean rnrWait;
    /**
     * End-to-end flow control (IB 9.7.7.2): the requests that take a receive (Sends, Writes with
     * immediate) the responder has room for beyond those in flight, from its last ACK's credits;
     * none until an ACK tells. Without credits one such request still goes while none is in
     * flight, to learn of receives posted since (it may meet an RNR NAK). Go-back-N after an RNR
     * NAK would otherwise resend a whole window of Sends each time a receiver falls behind.
     */
    private int credits;
    private int retries;
    private ScheduledFuture<?> retransmitTimer;
    /**
     * Responses that made progress, counted rather than timed (a clock read per ACK costs more
     * than the ACK): the timer fires on silence, not on every ack.
     */
    private int progress;
    /** {@link #progress} when the retransmission timer was set. */
    private int progressWhenArmed;
    private final AtomicInteger sendSlots = new AtomicInteger();
    private final AtomicLong retiredSeq = new AtomicLong(-1);

    SoftRequester(SoftQueuePair qp) {
        this.qp = qp;
        this.fabric = qp.fabric;
    }

    /** The sq PSN the QP was given: the next request goes out with it, knowing no credits yet. */
    void startAt(long psn) {
        nextPsn = psn;
        credits = 0;
    }

    /** ibv_post_send. */
    void post(SendWorkRequest... requests) {
        qp.sendLock.lock();
        try {
            for (int i = 0; i < requests.length; i++) {
                VerbsException refused = admit(requests[i]);
                if (refused != null) {
                    throw new PostException(refused, i);
                }
                SendWqe w = new SendWqe(requests[i], nextSeq);
                if (requests[i].has(SendFlag.INLINE)) {
                    // inline data is copied at post time: the caller may reuse its buffer at once
                    w.payload = qp.pd.gather(requests[i].sgList(), true);
                    if (w.payload == null) {
                        throw new PostException(new InvalidRequestException("ibv_post_send",
                                "inline data must lie in registered memory"), i);
                    }
                }
                if (requests[i].opcode() == SendOpcode.BIND_MW) {
                    // the key a peer will name the window by, as the application sets ibv_mw.rkey
                    ((SoftMemoryWindow) requests[i].bind().window()).posted(requests[i].bind().rkey());
                }
                nextSeq++;
                sendSlots.incrementAndGet();
                pending.add(w);
            }
        } finally {
            try {
                // the requests before a refused one stay posted, so they go out (or flush) either way
                if (qp.state == QpState.ERR) {
                    qp.completer.flush();
                } else {
                    pump();
                }
            } finally {
                qp.sendLock.unlock();
            }
        }
    }

    private VerbsException admit(SendWorkRequest wr) {
        String call = "ibv_post_send";
        VerbsException injected = qp.injectedRefusal(call);
        if (injected != null) {
            return injected;
        }
        QpState s = qp.state;
        if (s == QpState.RESET || s == QpState.INIT || s == QpState.RTR) {
            return new InvalidStateException(call, "the QP is in " + s + ", sends need RTS");
        }
        if (wr.sgList().size() > qp.init.maxSendSge()) {
            return new InvalidRequestException(call, wr.sgList().size() + " SGEs, the QP takes "
                    + qp.init.maxSendSge());
        }
        if (wr.has(SendFlag.INLINE) && wr.totalLength() > qp.init.maxInlineData()) {
            return new InvalidRequestException(call, wr.totalLength() + " inline bytes, the QP takes "
                    + qp.init.maxInlineData());
        }
        if (qp.init.type() == QpType.UD) {
            if (wr.opcode() != SendOpcode.SEND && wr.opcode() != SendOpcode.SEND_WITH_IMM) {
                return new InvalidRequestException(call, "a UD QP only sends");
            }
            if (wr.destination() == null || !(wr.destination().addressHandle() instanceof SoftAddressHandle)) {
                return new InvalidRequestException(call, "a UD send needs an address handle of this fabric");
            }
        } else if (wr.opcode().isAtomic() && (wr.sgList().size() != 1 || wr.sgList().get(0).length() != 8)) {
            return new InvalidRequestException(call, "an atomic takes one 8-byte SGE for its result");
        } else if (wr.opcode().isLocal() && !wr.sgList().isEmpty()) {
            return new InvalidRequestException(call, "a bind or local invalidation carries no SGEs");
        } else if (wr.opcode() == SendOpcode.BIND_MW) {
            if (wr.bind() == null || !(wr.bind().window() instanceof SoftMemoryWindow mw)
                    || !(wr.bind().region() instanceof SoftMemoryRegion mr)) {
                return new InvalidRequestException(call, "a bind needs a memory window and region of this fabric");
            }
            if (mw.isClosed() || mr.isClosed()) {
                // as the jna provider refuses it: rdma-core would read a freed ibv_mw or ibv_mr
                return new ResourceClosedException(call, "the bind's " + (mw.isClosed() ? "window" : "region")
                        + " is closed");
            }
        }
        if (sendSlots.get() >= qp.init.maxSendWr()) {
            return new QueueFullException(call, "the send queue holds " + qp.init.maxSendWr() + " requests");
        }
        return null;
    }

    /** Polling a send completion frees its slot and those of the unsignaled sends before it. */
    void retire(long seq) {
        long previous = retiredSeq.getAndAccumulate(seq, Math::max);
        if (seq > previous) {
            sendSlots.addAndGet((int) -(seq - previous));
        }
    }

    /** The oldest request not yet completed, sent or not; null when none is left. For a flush. */
    SendWqe takeOldest() {
        SendWqe w = inflight.poll();
        return w != null ? w : pending.poll();
    }

    /** Requests posted and not yet completed, sent or waiting to be. The caller holds sendLock. */
    int posted() {
        return inflight.size() + pending.size();
    }

    /** Nothing more goes out until the QP is ready again: no retransmission, no RNR wait. */
    void stop() {
        cancelRetransmit();
        rnrWait = false;
    }

    /** Transmits pending requests in order. The caller holds sendLock. */
    void pump() {
        if (pumping) {
            return;
        }
        pumping = true;
        LinkConnection tcp = qp.link;
        boolean corked = tcp != null && pending.size() > 1 && tcp.link.cork();
        try {
            while (!pending.isEmpty() && !rnrWait && qp.state == QpState.RTS) {
                if (pending.peek().wr.opcode().isLocal()) {
                    SendWqe local = pending.peek();
                    runLocal(local);
                    if (local.localFailure != null && !inflight.isEmpty()) {
                        break; // nothing after a failed one goes out: it fails the QP once those before it completed
                    }
                    pending.poll();
                    if (!inflight.isEmpty()) {
                        local.psn = nextPsn; // a rewind puts it back before the request that follows it
                        inflight.add(local);
                    } else if (!qp.completer.completeLocal(local)) {
                        return;
                    }
                    continue;
                }
                if (qp.init.type() != QpType.UD && takesReceive(pending.peek()) && !mayTakeReceive()) {
                    break; // the next ACK brings credits
                }
                if (qp.init.type() == QpType.RC && pending.peek().wr.has(SendFlag.FENCE) && readOrAtomicInFlight()) {
                    break; // the response that completes the read or atomic pumps again
                }
                SendWqe w = pending.poll();
                if (w.payload == null && needsPayload(w.wr.opcode())) {
                    w.payload = qp.pd.gather(w.wr.sgList(), false);
                    if (w.payload == null) {
                        qp.completer.complete(w, WcStatus.LOC_PROT_ERR, 0);
                        qp.enterError();
                        return;
                    }
                }
                if (qp.init.type() == QpType.UD) {
                    // in flight until the wire carried it, so a flush meanwhile completes it once
                    inflight.add(w);
                    fabric.onWire(() -> carryDatagram(w));
                    continue;
                }
                w.psn = nextPsn++;
                if (takesReceive(w)) {
                    spendCredits(1);
                }
                inflight.add(w);
                transmit(w);
            }
        } finally {
            pumping = false;
            if (corked) {
                tcp.link.uncork();
            }
        }
        armRetransmit();
    }

    /**
     * Runs a bind or invalidation when the requester reaches it, once, as rxe's do_local_ops does:
     * it takes effect before any request after it goes out, and completes in order, once the
     * requests before it have (it waits behind them in flight).
     */
    private void runLocal(SendWqe w) {
        if (w.ran) {
            return;
        }
        w.ran = true;
        SendWorkRequest wr = w.wr;
        boolean bind = wr.opcode() == SendOpcode.BIND_MW;
        SoftMemoryWindow mw = bind ? (SoftMemoryWindow) wr.bind().window() : qp.device.memoryWindow(wr.rkey());
        String refused = bind ? mw.bind(qp, wr.bind())
                : mw == null ? "no window is bound under that key" : mw.invalidate(qp, wr.rkey());
        if (refused != null) {
            // the completion's status is all verbs report: the reason goes to the log
            w.localFailure = bind ? WcStatus.MW_BIND_ERR : WcStatus.LOC_QP_OP_ERR;
            log.debug("QP {}: {} {} failed: {}", qp.qpNum(), wr.opcode(), wr.wrId(), refused);
        }
    }

    private static boolean takesReceive(SendWqe w) {
        SendOpcode op = w.wr.opcode();
        return op == SendOpcode.SEND || op == SendOpcode.SEND_WITH_IMM || op == SendOpcode.RDMA_WRITE_WITH_IMM;
    }

    private boolean mayTakeReceive() {
        if (credits > 0) {
            return true;
        }
        for (SendWqe w : inflight) {
            if (takesReceive(w)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Whether a READ or an atomic is still awaiting its response: a fenced request waits for them,
     * since the responder reads a READ's data as its response goes out, after later requests ran.
     */
    private boolean readOrAtomicInFlight() {
        for (SendWqe w : inflight) {
            if (!needsPayload(w.wr.opcode())) {
                return true;
            }
        }
        return false;
    }

    /** An ACK through {@code psn} with the responder's credits: room for that many after it. */
    void credited(long psn, int ackCredits) {
        if (ackCredits == Packet.UNLIMITED_CREDITS) {
            credits = UNLIMITED;
            return;
        }
        int after = 0;
        for (SendWqe w : inflight) {
            if (w.psn > psn && takesReceive(w)) {
                after++;
            }
        }
        credits = ackCredits - after;
    }

    /** Requests that take a receive went out ({@code n} > 0) or back to pending; no count without a limit. */
    private void spendCredits(int n) {
        if (credits != UNLIMITED) {
            credits -= n;
        }
    }

    /** Whether the request carries a payload out; a READ's and an atomic's data come back instead. */
    static boolean needsPayload(SendOpcode op) {
        return op != SendOpcode.RDMA_READ && !op.isAtomic();
    }

    private void transmit(SendWqe w) {
        SendWorkRequest wr = w.wr;
        int flags = (wr.has(SendFlag.SOLICITED) ? Packet.SOLICITED : 0) | (wr.opcode().hasImmediate() ? Packet.WITH_IMM : 0)
                | (qp.migratedOnce ? Packet.MIGRATED : 0);
        int length = wr.opcode() == SendOpcode.RDMA_READ ? (int) wr.totalLength() : 0;
        if (!pathUp() && !(qp.migrationState == MigrationState.ARMED && migrateOnFailure())) {
            return; // lost: the retransmit timer will notice
        }
        Packet p = new Packet(Packet.Kind.REQUEST, w.psn, wr.opcode().ordinal(), flags, wr.immData(), wr.remoteAddress(),
                wr.rkey(), length, wr.compareAdd(), wr.swap(), 0, destinationPort(), w.payload);
        LinkConnection tcp = qp.link;
        if (tcp != null) {
            tcp.send(p);
            return;
        }
        SoftQueuePair peer = qp.remote;
        if (peer != null && !peer.dropped) {
            SoftWire wire = fabric.wire();
            if (wire != null) {
                // the request runs after the post returned, as a device runs it: the buffer is the fabric's until the completion
                wire.carry(new SoftWire.Request() {
                    @Override
                    public SoftCompleter completer() {
                        return qp.completer;
                    }

                    @Override
                    public void run() {
                        carry(p, peer, wire);
                    }
                });
            } else {
                carry(p, peer, null);
            }
        }
    }

    /**
     * A request meets its responder in this JVM, and the response its completer: on the wire
     * ({@code wire} not null), an ACK may stand for those before it.
     */
    private void carry(Packet p, SoftQueuePair peer, SoftWire wire) {
        if (!peer.dropped && qp.transmits()) {
            Packet response = peer.responder.onRequest(p);
            if (response != null && wire != null) {
                wire.respond(qp.completer, response);
            } else if (response != null) {
                qp.completer.onResponse(response);
            }
            peer.responder.responded();
        }
    }

    private boolean migrateOnFailure() {
        qp.migrate();
        qp.migratedOnce = true;
        qp.device.raise(new AsyncEvent.QpEvent(AsyncEventType.PATH_MIG, qp.qpNum()));
        if (pathUp()) {
            return true;
        }
        qp.device.raise(new AsyncEvent.QpEvent(AsyncEventType.PATH_MIG_ERR, qp.qpNum()));
        return false;
    }

    private boolean pathUp() {
        if (qp.dropped || !qp.device.port(qp.portNum, "transmit").isUp()) {
            return false;
        }
        SoftQueuePair peer = qp.remote;
        if (peer == null || qp.path == null) {
            return qp.link != null;
        }
        SoftPort far = far(qp.path, peer).port();
        return far != null && far.isUp();
    }

    private int destinationPort() {
        AddressVector path = qp.path;
        return path == null ? 1 : far(path, qp.remote).portNum();
    }

    /** The far end of a path: its port (null without a peer in this fabric) and port number. */
    private record FarEnd(AddressVector path, SoftQueuePair peer, SoftPort port, int portNum) {
    }

    /** Looked up once per path and peer, not at every transmit: the GID's copy and the scan of the ports. */
    private volatile FarEnd farEnd;

    private FarEnd far(AddressVector path, SoftQueuePair peer) {
        FarEnd f = farEnd;
        if (f == null || f.path() != path || f.peer() != peer) {
            byte[] gid = path.dgid();
            f = new FarEnd(path, peer, peer == null ? null : peer.device.portFor(gid), gid[15]);
            farEnd = f;
        }
        return f;
    }

    /**
     * The wire's turn for a datagram: delivered or dropped, then completed. Nothing happens when
     * the QP flushed it meanwhile (it is no longer the oldest in flight).
     */
    private void carryDatagram(SendWqe w) {
        qp.sendLock.lock();
        try {
            if (inflight.peek() != w) {
                return;
            }
            inflight.poll();
            sendDatagram(w);
        } finally {
            qp.sendLock.unlock();
        }
    }

    private void sendDatagram(SendWqe w) {
        SendWorkRequest.UdDestination dest = w.wr.destination();
        AddressVector av = dest.addressHandle().addressVector();
        if (w.payload.remaining() > Math.min(qp.pathMtu, SoftDevice.MTU)) {
            qp.completer.complete(w, WcStatus.LOC_LEN_ERR, 0);
            return;
        }
        SoftPort local = qp.device.ports[Math.max(1, Math.min(2, av.portNum())) - 1];
        byte[] sgid = local.gid;
        int qkeyToUse = dest.remoteQkey() < 0 ? qp.qkey : dest.remoteQkey();
        int imm = w.wr.opcode().hasImmediate() ? Packet.WITH_IMM : 0;
        if (local.isUp()) {
            if (dest.remoteQpn() == SoftFabric.MULTICAST_QPN) {
                // every attached QP receives, the sender too: IB and RoCE loop multicast back by default
                for (SoftQueuePair member : fabric.multicastMembers(av.dgid())) {
                    member.responder.onDatagram(w.payload, imm, w.wr.immData(), qp.qpNum(), sgid, av.dgid(),
                            qkeyToUse);
                }
            } else {
                SoftPort far = fabric.portFor(av.dgid());
                SoftQueuePair target = far == null || !far.isUp() ? null : far.device.queuePair(dest.remoteQpn());
                if (target != null) {
                    target.responder.onDatagram(w.payload, imm, w.wr.immData(), qp.qpNum(), sgid, av.dgid(),
                            qkeyToUse);
                }
            }
        }
        qp.completer.complete(w, WcStatus.SUCCESS, 0); // UD is unreliable: a lost datagram still completes
    }

    /** A response made progress: the retry count starts over, and whatever waits goes out. */
    void progressed() {
        retries = 0;
        progress++;
        pump();
    }

    /** An RNR NAK: everything in flight goes again, after the responder's RNR timer. */
    void retryAfterRnr(long nanos) {
        rewind();
        if (credits != UNLIMITED) {
            credits = 0; // the receiver had none: the first request after the wait goes alone
        }
        rnrWait = true;
        schedule(this::resumeAfterRnr, nanos);
    }

    /** Puts every request in flight back in front of the pending ones, to send again in order. */
    private void rewind() {
        SendWqe w;
        while ((w = inflight.pollLast()) != null) {
            if (takesReceive(w)) {
                spendCredits(-1); // counted again when it goes again
            }
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
        qp.sendLock.lock();
        try {
            rnrWait = false;
            pump();
        } finally {
            qp.sendLock.unlock();
        }
    }

    private void armRetransmit() {
        // UD is unreliable: a datagram in flight is never sent again
        if (inflight.isEmpty() || retransmitTimer != null || qp.timeout == 0 || qp.isClosed()
                || qp.init.type() == QpType.UD) {
            return;
        }
        progressWhenArmed = progress;
        retransmitTimer = schedule(this::onRetransmitTimeout, transportTimeoutNanos());
    }

    /**
     * 4.096 us * 2^timeout (IB spec), at least 20 ms: the soft wire is a thread the OS schedules,
     * and on a loaded machine it may not run for milliseconds, where an HCA's engine would.
     */
    private long transportTimeoutNanos() {
        return Math.max(20_000_000L, (long) (4096.0 * (1L << Math.min(qp.timeout, 31))));
    }

    private ScheduledFuture<?> schedule(Runnable task, long nanos) {
        try {
            return fabric.timer.schedule(task, nanos, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            return null; // the fabric is closing and flushes this QP itself
        }
    }

    void cancelRetransmit() {
        if (retransmitTimer != null) {
            retransmitTimer.cancel(false);
            retransmitTimer = null;
        }
    }

    private void onRetransmitTimeout() {
        qp.sendLock.lock();
        try {
            retransmitTimer = null;
            if (inflight.isEmpty() || qp.state != QpState.RTS && qp.state != QpState.SQD) {
                return;
            }
            if (progress != progressWhenArmed) {
                // responses kept coming: wait a full timeout more, so silence is found after one
                // timeout at least and two at most
                progressWhenArmed = progress;
                retransmitTimer = schedule(this::onRetransmitTimeout, transportTimeoutNanos());
                return;
            }
            if (++retries > qp.retryCount) {
                qp.completer.complete(inflight.poll(), WcStatus.RETRY_EXC_ERR, 0);
                qp.enterError();
                return;
            }
            rewind();
            pump();
        } finally {
            qp.sendLock.unlock();
        }
    }
}
