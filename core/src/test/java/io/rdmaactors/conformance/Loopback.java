package io.rdmaactors.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.rdmaactors.cm.AddressVector;
import io.rdmaactors.cm.AsyncEvent;
import io.rdmaactors.cm.AsyncEventType;
import io.rdmaactors.cm.CmEvent;
import io.rdmaactors.verbs.Access;
import io.rdmaactors.verbs.CmId;
import io.rdmaactors.verbs.CompletionQueue;
import io.rdmaactors.verbs.ConnectionParameters;
import io.rdmaactors.verbs.Device;
import io.rdmaactors.verbs.EventChannel;
import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.PortSpace;
import io.rdmaactors.verbs.ProtectionDomain;
import io.rdmaactors.verbs.QpAttributes;
import io.rdmaactors.verbs.QpInitAttributes;
import io.rdmaactors.verbs.QpState;
import io.rdmaactors.verbs.QueuePair;
import io.rdmaactors.verbs.SharedReceiveQueue;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Two connected RC QPs, {@link #a} (the requester in most tests, the CM's active side) and
 * {@link #b}: built by hand (RESET, INIT, RTR, RTS towards each other's port GID) or through the
 * CM. Closing it closes everything it opened, in an order the close rules allow.
 */
public final class Loopback implements AutoCloseable {

    public static final int PORT = 1;
    public static final int PSN_A = 0x100;
    public static final int PSN_B = 0x200;
    /** The QPs grant every remote right, so a remote access fails only for the region's sake. */
    public static final Set<Access> QP_ACCESS =
            EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ, Access.REMOTE_ATOMIC);
    private static final Duration STEP = FabricConformance.STEP;

    /** One end: its PD, CQ and QP, the regions registered through it, and its CM id if any. */
    public static final class Side implements AutoCloseable {
        public final ProtectionDomain pd;
        public final CompletionQueue cq;
        public final QueuePair qp;
        public final CmId id;
        private final boolean ownsPd;
        private final boolean ownsCq;
        private final List<MemoryRegion> regions = new ArrayList<>();

        private Side(ProtectionDomain pd, boolean ownsPd, CompletionQueue cq, boolean ownsCq, QueuePair qp, CmId id) {
            this.pd = pd;
            this.ownsPd = ownsPd;
            this.cq = cq;
            this.ownsCq = ownsCq;
            this.qp = qp;
            this.id = id;
        }

        /** Registers {@code buffer} with exactly {@code access}, or the PD's default (local only) if none given. */
        public MemoryRegion register(ByteBuffer buffer, Access... access) {
            MemoryRegion mr = access.length == 0 ? pd.register(buffer) : pd.register(buffer, EnumSet.of(access[0], access));
            regions.add(mr);
            return mr;
        }

        public MemoryRegion register(int length, Access... access) {
            return register(ByteBuffer.allocateDirect(length), access);
        }

        /** Closes its regions, id and QP, then the CQ and PD it made. */
        @Override
        public void close() {
            regions.forEach(MemoryRegion::close);
            if (id != null) {
                id.close();
            }
            qp.close();
            if (ownsCq) {
                cq.close();
            }
            if (ownsPd) {
                pd.close();
            }
        }
    }

    public final Side a;
    public final Side b;
    /** CM only: the active side's channel, the passive side's channel and the listener. */
    public final EventChannel clientEvents;
    public final EventChannel serverEvents;
    public final CmId listener;

    private Loopback(Side a, Side b, EventChannel clientEvents, EventChannel serverEvents, CmId listener) {
        this.a = a;
        this.b = b;
        this.clientEvents = clientEvents;
        this.serverEvents = serverEvents;
        this.listener = listener;
    }

    public static Builder on(Device device) {
        return new Builder(device);
    }

    /**
     * Two QPs on one device, connected by hand or {@link #throughCm through the CM}; options say
     * what differs from the defaults.
     */
    public static final class Builder {
        private final Device device;
        private Fabric cm;
        private boolean adjusted;
        private ProtectionDomain pd;
        private CompletionQueue cqB;
        private SharedReceiveQueue srqB;
        private int sendDepth = 16;
        private int recvDepth = 16;
        private int cqe = 64;
        private Consumer<QpAttributes> rtr = a -> { };
        private Consumer<QpAttributes> rts = a -> { };

        private Builder(Device device) {
            this.device = device;
        }

        /** Both QPs in this PD, which the loopback does not close. */
        public Builder pd(ProtectionDomain shared) {
            pd = shared;
            return this;
        }

        /** B's QP completes on this CQ, which the loopback does not close. */
        public Builder cqB(CompletionQueue cq) {
            cqB = cq;
            return this;
        }

        /** B's QP takes its receives from this SRQ (in the shared PD). */
        public Builder srqB(SharedReceiveQueue srq) {
            srqB = srq;
            return this;
        }

        public Builder depths(int send, int recv) {
            sendDepth = send;
            recvDepth = recv;
            return this;
        }

        public Builder cqe(int entries) {
            cqe = entries;
            return this;
        }

        /** Adjusts both QPs' INIT to RTR attributes. */
        public Builder rtr(Consumer<QpAttributes> adjust) {
            rtr = adjust;
            adjusted = true;
            return this;
        }

        /** Adjusts both QPs' RTR to RTS attributes (timeouts, retry counts). */
        public Builder rts(Consumer<QpAttributes> adjust) {
            rts = adjust;
            adjusted = true;
            return this;
        }

        /**
         * Connects the two QPs through {@code fabric}'s CM, as two processes do: the active side
         * from 127.0.0.1 to a listener there. On the soft fabric with {@code transport=tcp} their
         * traffic then crosses a link. The RTR and RTS adjustments are made once both sides are
         * established, through SQD (SQD to SQD takes every one of them, RTS to RTS does not).
         */
        public Builder throughCm(Fabric fabric) {
            cm = fabric;
            return this;
        }

        public Loopback open() {
            if (cm != null) {
                try {
                    return openThroughCm();
                } catch (Exception e) {
                    throw new IllegalStateException("connecting the loopback through the CM", e);
                }
            }
            boolean ownsPd = pd == null;
            ProtectionDomain sharedPd = ownsPd ? device.allocateProtectionDomain() : pd;
            CompletionQueue cqA = device.createCompletionQueue(cqe, null);
            CompletionQueue recvB = cqB != null ? cqB : device.createCompletionQueue(cqe, null);
            QueuePair qpA = sharedPd.createQueuePair(QpInitAttributes.rc(cqA, sendDepth, recvDepth));
            QpInitAttributes initB = QpInitAttributes.rc(recvB, sendDepth, recvDepth);
            QueuePair qpB = sharedPd.createQueuePair(srqB == null ? initB : initB.withSrq(srqB));
            // only the first side closes a shared, self-made PD
            Side a = new Side(sharedPd, false, cqA, true, qpA, null);
            Side b = new Side(sharedPd, ownsPd, recvB, cqB == null, qpB, null);
            connect(device, qpA, qpB, rtr, rts);
            return new Loopback(a, b, null, null, null);
        }

        private Loopback openThroughCm() throws Exception {
            EventChannel serverEvents = cm.createEventChannel();
            EventChannel clientEvents = cm.createEventChannel();
            CmId listener = listenOnLoopback(cm, serverEvents);
            CmId client = cm.createCmId(clientEvents, PortSpace.TCP);
            resolve(client, listener.localAddress());
            boolean ownsPd = pd == null;
            ProtectionDomain sharedPd = ownsPd ? device.allocateProtectionDomain() : pd;
            CompletionQueue cqA = device.createCompletionQueue(cqe, null);
            QueuePair qpA = client.createQueuePair(sharedPd, QpInitAttributes.rc(cqA, sendDepth, recvDepth));
            client.connect(ConnectionParameters.of(null));
            CmId agent = awaitRequest(serverEvents);
            CompletionQueue recvB = cqB != null ? cqB : device.createCompletionQueue(cqe, null);
            QpInitAttributes initB = QpInitAttributes.rc(recvB, sendDepth, recvDepth);
            QueuePair qpB = agent.createQueuePair(sharedPd, srqB == null ? initB : initB.withSrq(srqB));
            agent.accept(ConnectionParameters.of(null));
            awaitEstablished(clientEvents, serverEvents);
            if (adjusted) {
                adjust(qpA, qpB);
            }
            Side a = new Side(sharedPd, false, cqA, true, qpA, client);
            Side b = new Side(sharedPd, ownsPd, recvB, cqB == null, qpB, agent);
            return new Loopback(a, b, clientEvents, serverEvents, listener);
        }

        /** RTS, SQD, the adjustments, RTS; the SQ_DRAINED events of the way are taken off the device's queue. */
        private void adjust(QueuePair... qps) throws Exception {
            Set<AsyncEvent> drained = new HashSet<>();
            for (QueuePair qp : qps) {
                qp.modify(QpAttributes.of().state(QpState.SQD));
                drained.add(new AsyncEvent.QpEvent(AsyncEventType.SQ_DRAINED, qp.qpNum()));
            }
            Set<AsyncEvent> seen = new HashSet<>();
            for (int i = 0; i < qps.length; i++) {
                seen.add(device.asyncEvents().await(STEP));
            }
            assertEquals(drained, seen, "entering SQD");
            for (QueuePair qp : qps) {
                QpAttributes adjustments = QpAttributes.of().state(QpState.SQD);
                rtr.accept(adjustments);
                rts.accept(adjustments);
                qp.modify(adjustments);
                qp.modify(QpAttributes.of().state(QpState.RTS));
            }
        }
    }

    /** RESET to RTS on both QPs, each pointed at the other through port {@link #PORT}. */
    public static void connect(Device device, QueuePair a, QueuePair b, Consumer<QpAttributes> rtr,
                               Consumer<QpAttributes> rts) {
        byte[] gid = device.queryPort(PORT).gid(0);
        for (QueuePair qp : List.of(a, b)) {
            qp.modify(QpAttributes.init(PORT, QP_ACCESS));
        }
        QpAttributes rtrA = QpAttributes.readyToReceive(AddressVector.global(gid, PORT), b.qpNum(), PSN_B);
        QpAttributes rtrB = QpAttributes.readyToReceive(AddressVector.global(gid, PORT), a.qpNum(), PSN_A);
        rtr.accept(rtrA);
        rtr.accept(rtrB);
        a.modify(rtrA);
        b.modify(rtrB);
        QpAttributes rtsA = QpAttributes.readyToSend(PSN_A);
        QpAttributes rtsB = QpAttributes.readyToSend(PSN_B);
        rts.accept(rtsA);
        rts.accept(rtsB);
        a.modify(rtsA);
        b.modify(rtsB);
    }

    /**
     * Connects through the CM: a listener on 127.0.0.1 (ephemeral port), an active id that
     * resolves, connects with {@code connect}, and a passive id accepted with {@code accept}.
     * Both sides have seen ESTABLISHED when this returns.
     */
    public static Loopback viaCm(Fabric fabric, ConnectionParameters connect, ConnectionParameters accept)
            throws Exception {
        EventChannel serverEvents = fabric.createEventChannel();
        EventChannel clientEvents = fabric.createEventChannel();
        CmId listener = listenOnLoopback(fabric, serverEvents);
        CmId client = fabric.createCmId(clientEvents, PortSpace.TCP);
        Side a = activeSide(client, listener.localAddress());
        client.connect(connect);
        CmId agent = awaitRequest(serverEvents);
        Side b = passiveSide(agent);
        agent.accept(accept);
        awaitEstablished(clientEvents, serverEvents);
        return new Loopback(a, b, clientEvents, serverEvents, listener);
    }

    /** A listening id on 127.0.0.1, an ephemeral port, its events on {@code events}. */
    private static CmId listenOnLoopback(Fabric fabric, EventChannel events) {
        CmId listener = fabric.createCmId(events, PortSpace.TCP);
        listener.bind(new InetSocketAddress("127.0.0.1", 0));
        listener.listen(4);
        return listener;
    }

    /** Resolves {@code id}'s address and route to {@code server}. */
    private static void resolve(CmId id, InetSocketAddress server) throws Exception {
        id.resolveAddress(null, server, STEP);
        assertInstanceOf(CmEvent.AddrResolved.class, id.channel().await(STEP));
        id.resolveRoute(STEP);
        assertInstanceOf(CmEvent.RouteResolved.class, id.channel().await(STEP));
    }

    /** The id of the next connect request on {@code serverEvents}. */
    private static CmId awaitRequest(EventChannel serverEvents) throws Exception {
        CmEvent.ConnectRequest request = assertInstanceOf(CmEvent.ConnectRequest.class, serverEvents.await(STEP));
        CmId agent = serverEvents.cmId(request.id());
        assertNotNull(agent, "the connect request's id");
        return agent;
    }

    private static void awaitEstablished(EventChannel clientEvents, EventChannel serverEvents) throws Exception {
        assertInstanceOf(CmEvent.Established.class, clientEvents.await(STEP));
        assertInstanceOf(CmEvent.Established.class, serverEvents.await(STEP));
    }

    /** Resolves {@code id} to {@code server} and gives it a PD, CQ and RC QP, ready to connect. */
    public static Side activeSide(CmId id, InetSocketAddress server) throws Exception {
        resolve(id, server);
        return sideOf(id);
    }

    /** Gives the id of a connect request a PD, CQ and RC QP, ready to accept. */
    public static Side passiveSide(CmId agent) {
        return sideOf(agent);
    }

    private static Side sideOf(CmId id) {
        ProtectionDomain pd = id.device().allocateProtectionDomain();
        CompletionQueue cq = id.device().createCompletionQueue(64, null);
        QueuePair qp = id.createQueuePair(pd, QpInitAttributes.rc(cq, 16, 16));
        return new Side(pd, true, cq, true, qp, id);
    }

    public boolean bothIn(QpState state) {
        return a.qp.state() == state && b.qp.state() == state;
    }

    @Override
    public void close() {
        a.close();
        b.close();
        if (listener != null) {
            listener.close();
            clientEvents.close();
            serverEvents.close();
        }
    }
}
