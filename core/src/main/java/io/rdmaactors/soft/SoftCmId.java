package io.rdmaactors.soft;

import io.rdmaactors.cm.AddressVector;
import io.rdmaactors.cm.CmEvent;
import io.rdmaactors.cm.UdParameters;
import io.rdmaactors.soft.link.LinkConnection;
import io.rdmaactors.soft.link.LinkHandshake;
import io.rdmaactors.soft.link.TcpLink;
import io.rdmaactors.soft.wire.CmMessage;
import io.rdmaactors.soft.wire.Packet;
import io.rdmaactors.verbs.Access;
import io.rdmaactors.verbs.CmId;
import io.rdmaactors.verbs.ConnectionParameters;
import io.rdmaactors.verbs.Device;
import io.rdmaactors.verbs.EventChannel;
import io.rdmaactors.verbs.InvalidRequestException;
import io.rdmaactors.verbs.InvalidStateException;
import io.rdmaactors.verbs.NotSupportedException;
import io.rdmaactors.verbs.PortSpace;
import io.rdmaactors.verbs.ProtectionDomain;
import io.rdmaactors.verbs.QpAttributes;
import io.rdmaactors.verbs.QpInitAttributes;
import io.rdmaactors.verbs.QpState;
import io.rdmaactors.verbs.QpType;
import io.rdmaactors.verbs.QueuePair;
import io.rdmaactors.verbs.ResourceKind;
import io.rdmaactors.verbs.VerbsException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.channels.ServerSocketChannel;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A soft RDMA CM id (rdma_cm's cma.c): address and route resolution, listening (the REQs that
 * reach a listening id are admitted by its {@link SoftCmListener}), the IB CM exchange
 * (REQ/REP/RTU, REJ, DREQ/DREP) with a peer id in this JVM or on a {@link TcpLink}, and
 * multicast membership (its {@link SoftMulticastMemberships}). Its events go to the channel it is on at the time they happen.
 */
final class SoftCmId extends SoftResource implements CmId, TcpLink.Endpoint {

    private static final Logger log = LoggerFactory.getLogger(SoftCmId.class);
    /** Linux's ephemeral port range, which rdma_cm draws an unbound id's port from. */
    static final int EPHEMERAL_FIRST = 32768;
    static final int EPHEMERAL_LAST = 60999;
    /** A random start per process keeps the ports of different client processes apart. */
    private static final AtomicInteger EPHEMERAL = new AtomicInteger(
            ThreadLocalRandom.current().nextInt(EPHEMERAL_LAST - EPHEMERAL_FIRST + 1));
    private static final int ETIMEDOUT = -VerbsException.ETIMEDOUT;
    /**
     * The local ACK timeout rdma_cm gives a connected QP on RoCE: the path's packet lifetime (16)
     * plus one, 4.096 us * 2^17, about 0.54 s. A QP's own default (14, 67 ms) is too short for one
     * large message between loaded processes: it would be retransmitted, then fail RETRY_EXC_ERR.
     */
    static final int ACK_TIMEOUT = 17;
    /**
     * How long an active side waits for the REP once the passive side acknowledged its REQ with an
     * MRA: rdma_cm's MRA service timeout (CMA_CM_MRA_SETTING, 4.096 us * 2^24), so the
     * application's own connect and accept timeouts decide, as on rdma-core.
     */
    static final long MRA_SERVICE_TIMEOUT_MS = 68_719;

    /** The next ephemeral port, round the range: a long-running process never runs out. */
    static int ephemeralPort() {
        return EPHEMERAL_FIRST + Math.floorMod(EPHEMERAL.getAndIncrement(), EPHEMERAL_LAST - EPHEMERAL_FIRST + 1);
    }

    enum State {
        IDLE, BOUND, ADDR_RESOLVED, ROUTE_RESOLVED, LISTEN, CONNECT, REQUEST_RECEIVED, ACCEPTED, ESTABLISHED,
        DISCONNECT_SENT, DISCONNECT_RECEIVED, DISCONNECTED, REJECTED
    }

    private final long handle;
    private final PortSpace portSpace;
    private volatile SoftEventChannel channel;
    private State state = State.IDLE;
    private SoftPort port;
    private InetSocketAddress local;
    private InetSocketAddress remote;
    private volatile SoftQueuePair qp;
    private long psn;
    /** What the active side connected with: its retry count is its QP's when the REP comes. */
    private ConnectionParameters connectParameters;

    private ServerSocketChannel server;
    /** What listens, once the id listens. */
    private SoftCmListener listening;
    /** The listener a passive id was born from, until it is accepted or rejected. */
    private SoftCmListener listener;
    private CmMessage request;

    /** The peer id in this JVM, or null when it is behind {@link #link}. */
    private volatile SoftCmId peer;
    private volatile LinkConnection link;
    /** Killed by fault injection: gone without a word, as a SIGKILLed process is. */
    private volatile boolean killed;
    private ScheduledFuture<?> cmTimer;
    private final SoftMulticastMemberships memberships;

    SoftCmId(SoftFabric fabric, SoftEventChannel channel, PortSpace portSpace) {
        super(fabric, ResourceKind.CM_ID);
        this.handle = fabric.nextHandle();
        this.portSpace = portSpace;
        this.channel = channel;
        this.memberships = new SoftMulticastMemberships(fabric);
        channel.add(this);
    }

    @Override
    public long handle() {
        return handle;
    }

    @Override
    public PortSpace portSpace() {
        return portSpace;
    }

    @Override
    public SoftEventChannel channel() {
        return channel;
    }

    @Override
    public synchronized Device device() {
        return port == null ? null : port.device;
    }

    @Override
    public synchronized int portNum() {
        return port == null ? 0 : port.portNum;
    }

    @Override
    public QueuePair queuePair() {
        return qp;
    }

    @Override
    public synchronized InetSocketAddress localAddress() {
        return local;
    }

    @Override
    public synchronized InetSocketAddress remoteAddress() {
        return remote;
    }

    private void post(CmEvent event) {
        if (!killed && !isClosed()) {
            channel.post(event);
        }
    }

    private void requireState(String call, State... allowed) {
        for (State s : allowed) {
            if (state == s) {
                return;
            }
        }
        throw new InvalidStateException(call, "the id is " + state);
    }

    // ---------------------------------------------------------------- addressing

    @Override
    public synchronized void bind(InetSocketAddress address) {
        checkOpen("rdma_bind_addr");
        requireState("rdma_bind_addr", State.IDLE);
        InetAddress ip = address.getAddress();
        SoftPort bound = null;
        if (!ip.isAnyLocalAddress()) {
            bound = fabric.portFor(ip);
            if (bound == null) {
                throw new VerbsException("rdma_bind_addr", VerbsException.EADDRNOTAVAIL, ip.getHostAddress()
                        + " is no address of this fabric's devices");
            }
        }
        InetAddress socketIp = bound == null ? InetAddress.getLoopbackAddress() : bound.address;
        if (portSpace == PortSpace.TCP) {
            ServerSocketChannel s = null;
            try {
                s = ServerSocketChannel.open();
                s.bind(new InetSocketAddress(socketIp, address.getPort()), 128);
                server = s;
                local = new InetSocketAddress(ip, s.socket().getLocalPort());
            } catch (IOException e) {
                closeQuietly(s);
                throw new VerbsException("rdma_bind_addr", VerbsException.EADDRINUSE, "cannot bind "
                        + socketIp.getHostAddress() + ":" + address.getPort() + ": " + e.getMessage(), e);
            }
        } else {
            local = new InetSocketAddress(ip, address.getPort() == 0 ? ephemeralPort() : address.getPort());
        }
        port = bound;
        state = State.BOUND;
    }

    @Override
    public synchronized void listen(int backlogSize) {
        checkOpen("rdma_listen");
        if (state == State.IDLE) {
            bind(new InetSocketAddress(0));
        }
        requireState("rdma_listen", State.BOUND);
        if (portSpace != PortSpace.TCP) {
            throw new NotSupportedException("rdma_listen", "the soft fabric listens in the TCP port space");
        }
        if (backlogSize < 1) {
            throw new InvalidRequestException("rdma_listen", "backlog must be positive");
        }
        try {
            listening = SoftCmListener.listen(this, server, local, backlogSize);
        } catch (IOException e) {
            throw new VerbsException("rdma_listen", VerbsException.EADDRINUSE, "cannot listen on " + local + ": "
                    + e.getMessage(), e);
        }
        state = State.LISTEN;
    }

    static InetAddress wildcard() {
        return new InetSocketAddress(0).getAddress();
    }

    @Override
    public synchronized void resolveAddress(InetSocketAddress source, InetSocketAddress destination, Duration timeout) {
        checkOpen("rdma_resolve_addr");
        requireState("rdma_resolve_addr", State.IDLE, State.BOUND, State.ADDR_RESOLVED);
        InetAddress ip = destination.getAddress();
        SoftPort chosen = fabric.portFor(ip);
        if (chosen == null && source != null && !source.getAddress().isAnyLocalAddress()) {
            chosen = fabric.portFor(source.getAddress());
            if (chosen == null) {
                throw new VerbsException("rdma_resolve_addr", VerbsException.EADDRNOTAVAIL,
                        source.getAddress().getHostAddress() + " is no address of this fabric's devices");
            }
        }
        if (chosen == null) {
            chosen = port != null ? port : firstPort();
        }
        if (chosen == null) {
            // every device was removed: nothing to resolve to, as rdma_cm without an RDMA device
            fabric.execute(() -> post(new CmEvent.AddrError(handle, -VerbsException.ENODEV)));
            return;
        }
        remote = destination;
        if (!(ip.isLoopbackAddress() || (portSpace == PortSpace.UDP && ip.isMulticastAddress()))) {
            // the soft fabric spans this host only: there is no route off it
            fabric.execute(() -> post(new CmEvent.AddrError(handle, -VerbsException.ENETUNREACH)));
            return;
        }
        if (!chosen.isUp()) {
            fabric.execute(() -> post(new CmEvent.AddrError(handle, -VerbsException.ENETUNREACH)));
            return;
        }
        port = chosen;
        if (local == null) {
            local = new InetSocketAddress(chosen.address, ephemeralPort());
        }
        state = State.ADDR_RESOLVED;
        fabric.execute(() -> post(new CmEvent.AddrResolved(handle)));
    }

    /** The first port of the fabric's first device, or null once every device was removed. */
    private SoftPort firstPort() {
        // one look at the list: a device removed between an isEmpty() and a get(0) would throw
        return fabric.softDevices().stream().findFirst().map(d -> d.ports[0]).orElse(null);
    }

    @Override
    public synchronized void resolveRoute(Duration timeout) {
        checkOpen("rdma_resolve_route");
        requireState("rdma_resolve_route", State.ADDR_RESOLVED);
        if (!port.isUp()) {
            fabric.execute(() -> post(new CmEvent.RouteError(handle, -VerbsException.ENETUNREACH)));
            return;
        }
        state = State.ROUTE_RESOLVED;
        fabric.execute(() -> post(new CmEvent.RouteResolved(handle)));
    }

    // ---------------------------------------------------------------- the QP

    @Override
    public synchronized QueuePair createQueuePair(ProtectionDomain pd, QpInitAttributes attributes) {
        checkOpen("rdma_create_qp");
        if (port == null) {
            throw new InvalidStateException("rdma_create_qp", "the id has no device before its address is resolved");
        }
        if (qp != null) {
            throw new InvalidStateException("rdma_create_qp", "the id has a QP already");
        }
        if (pd.device() != port.device) {
            throw new InvalidRequestException("rdma_create_qp", "the PD belongs to another device than the id");
        }
        boolean ud = portSpace == PortSpace.UDP;
        if (attributes.type() != (ud ? QpType.UD : QpType.RC)) {
            throw new InvalidRequestException("rdma_create_qp", portSpace + " ids take " + (ud ? "UD" : "RC") + " QPs");
        }
        SoftQueuePair created = (SoftQueuePair) pd.createQueuePair(attributes);
        try {
            if (ud) {
                created.modify(QpAttributes.of().state(QpState.INIT).portNum(port.portNum).qkey(SoftFabric.UDP_QKEY));
                created.modify(QpAttributes.of().state(QpState.RTR));
                created.modify(QpAttributes.of().state(QpState.RTS).sqPsn(0));
                memberships.attach(created);
            } else {
                // the CM grants the QP every remote right; memory regions decide what a peer may touch
                created.modify(QpAttributes.init(port.portNum, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE,
                        Access.REMOTE_READ, Access.REMOTE_ATOMIC)));
            }
        } catch (RuntimeException e) {
            created.close();
            throw e;
        }
        qp = created;
        return created;
    }

    @Override
    public synchronized void destroyQueuePair() {
        SoftQueuePair q = qp;
        if (q != null) {
            memberships.detach(q);
            qp = null;
            q.close();
        }
    }

    // ---------------------------------------------------------------- connecting

    @Override
    public synchronized void connect(ConnectionParameters parameters) {
        checkOpen("rdma_connect");
        if (portSpace != PortSpace.TCP) {
            throw new NotSupportedException("rdma_connect", "UD service id resolution is not in the soft fabric");
        }
        requireState("rdma_connect", State.ROUTE_RESOLVED);
        checkPrivateData("rdma_connect", parameters, ConnectionParameters.MAX_CONNECT_PRIVATE_DATA);
        if (qp == null || qp.state() != QpState.INIT) {
            throw new InvalidStateException("rdma_connect", "connect needs the id's QP in INIT");
        }
        psn = ThreadLocalRandom.current().nextInt(1 << 24);
        connectParameters = parameters;
        CmMessage req = CmMessage.connecting(CmMessage.Type.REQ, qp.qpNum(), psn, port.gid, port.portNum, parameters, local, remote);
        state = State.CONNECT;
        cmTimer = fabric.timer.schedule(this::connectTimedOut, fabric.cmTimeoutMs, TimeUnit.MILLISECONDS);
        SoftCmListener target = fabric.localTransport ? SoftCmListener.find(remote) : null;
        if (target != null) {
            target.id.fabric.execute(() -> target.onConnectRequest(req, this, null));
        } else {
            InetSocketAddress to = remote;
            fabric.execute(() -> openLink(to, req));
        }
    }

    /** Reaches a listener in another process; a refused connection means nobody listens there. */
    private void openLink(InetSocketAddress to, CmMessage req) {
        LinkConnection c;
        try {
            c = fabric.links.connect(to, this, (int) fabric.cmTimeoutMs);
        } catch (ConnectException nobodyListens) {
            onCm(CmMessage.reject(CmEvent.Rejected.INVALID_SERVICE_ID, new byte[0]), null);
            return;
        } catch (IOException | RuntimeException e) {
            linkFailed(e);
            return;
        }
        synchronized (this) {
            if (state != State.CONNECT || isClosed()) {
                c.close();
                return;
            }
            link = c;
        }
        c.send(req);
    }

    /** The link to the listener failed before a REQ could go: refused by its handshake or its caps. */
    private synchronized void linkFailed(Exception e) {
        if (state != State.CONNECT) {
            return;
        }
        int status;
        if (e instanceof LinkHandshake.AuthenticationException || e instanceof VerbsException) {
            log.warn("connecting to {}: {}", remote, e.getMessage());
            status = -VerbsException.EACCES;
        } else {
            log.debug("connecting to {}", remote, e);
            status = e instanceof SocketTimeoutException ? ETIMEDOUT : -VerbsException.ECONNRESET;
        }
        state = State.REJECTED;
        post(new CmEvent.Unreachable(handle, status));
    }

    private static void closeQuietly(ServerSocketChannel s) {
        if (s != null) {
            try {
                s.close();
            } catch (IOException e) {
                log.debug("closing a listening socket", e);
            }
        }
    }

    private synchronized void connectTimedOut() {
        if (state == State.CONNECT) {
            state = State.REJECTED;
            closeLink();
            post(new CmEvent.Unreachable(handle, ETIMEDOUT));
        } else if (state == State.ACCEPTED) {
            state = State.REJECTED;
            closeLink();
            post(new CmEvent.ConnectError(handle, ETIMEDOUT));
        }
    }

    /** Whether REQs may still become passive ids here; the caller holds this id's monitor. */
    boolean isListening() {
        return state == State.LISTEN && !isClosed();
    }

    /** This new id takes a REQ its listener admitted: CONNECT_REQUEST, with the id to accept or reject. */
    synchronized void acceptRequest(SoftCmListener fromListener, CmMessage req, SoftCmId from, LinkConnection via) {
        listener = fromListener;
        request = req;
        SoftPort owning = req.destination() == null ? null : fabric.portFor(req.destination().getAddress());
        SoftPort listenerPort = fromListener.id.port;
        port = owning != null ? owning : listenerPort != null ? listenerPort : firstPort();
        local = req.destination();
        remote = req.source();
        peer = from;
        link = via;
        if (via != null) {
            via.attach(this);
        }
        state = State.REQUEST_RECEIVED;
        post(new CmEvent.ConnectRequest(handle, fromListener.id.handle, req.privateData(), null));
        // the application answers when it will: the active side waits for it, not the CM's timeout
        sendToPeer(CmMessage.of(CmMessage.Type.MRA));
    }

    void deliver(CmMessage message, SoftCmId from) {
        if (!killed) {
            fabric.carryCm(() -> onCm(message, from));
        }
    }

    private void sendToPeer(CmMessage message) {
        if (port != null && !port.device.isAlive()) {
            return; // a removed device sends nothing
        }
        SoftCmId p = peer;
        if (p != null) {
            p.deliver(message, this);
        } else if (link != null) {
            link.send(message);
        }
    }

    @Override
    public synchronized void accept(ConnectionParameters parameters) {
        checkOpen("rdma_accept");
        requireState("rdma_accept", State.REQUEST_RECEIVED);
        checkPrivateData("rdma_accept", parameters, ConnectionParameters.MAX_ACCEPT_PRIVATE_DATA);
        if (qp == null || qp.state() != QpState.INIT) {
            throw new InvalidStateException("rdma_accept", "accept needs the id's QP in INIT");
        }
        psn = ThreadLocalRandom.current().nextInt(1 << 24);
        SoftCmId p = peer;
        qp.connectTo(p == null ? null : p.qp, link);
        // ib_cm keeps the REQ's retry counts for this QP: rdma_accept moves it to RTS before the REP
        // carries this side's own rnr_retry_count to the peer
        readyQueuePair(request, parameters.responderResources(), parameters.initiatorDepth(), request.retryCount(),
                request.rnrRetryCount());
        releaseListener();
        state = State.ACCEPTED;
        cmTimer = fabric.timer.schedule(this::connectTimedOut, fabric.cmTimeoutMs, TimeUnit.MILLISECONDS);
        sendToPeer(CmMessage.connecting(CmMessage.Type.REP, qp.qpNum(), psn, port.gid, port.portNum,
                parameters, local, remote));
    }

    /**
     * Moves the QP to RTS towards the peer described by its REQ or REP, as rdma_cm does: with the
     * responder resources it answers reads and atomics with (max_dest_rd_atomic), the reads and
     * atomics it keeps outstanding (max_rd_atomic) and the retry counts the CM settled on.
     */
    private void readyQueuePair(CmMessage from, int maxDestRdAtomic, int maxRdAtomic, int retryCount, int rnrRetry) {
        AddressVector path = AddressVector.global(from.gid(), port.portNum);
        qp.modify(QpAttributes.readyToReceive(path, from.qpn(), (int) from.psn()).pathMtu(SoftDevice.MTU)
                .maxDestRdAtomic(maxDestRdAtomic));
        qp.modify(QpAttributes.readyToSend((int) psn).timeout(ACK_TIMEOUT).retryCount(retryCount).rnrRetry(rnrRetry)
                .maxRdAtomic(maxRdAtomic));
    }

    private void releaseListener() {
        SoftCmListener l = listener;
        listener = null;
        if (l != null) {
            l.released();
        }
    }

    @Override
    public synchronized void reject(byte[] privateData) {
        checkOpen("rdma_reject");
        requireState("rdma_reject", State.REQUEST_RECEIVED);
        byte[] data = privateData == null ? new byte[0] : privateData;
        if (data.length > ConnectionParameters.MAX_REJECT_PRIVATE_DATA) {
            throw new InvalidRequestException("rdma_reject", data.length + " bytes of private data, the IB CM carries "
                    + ConnectionParameters.MAX_REJECT_PRIVATE_DATA);
        }
        releaseListener();
        state = State.REJECTED;
        sendToPeer(CmMessage.reject(CmEvent.Rejected.CONSUMER_DEFINED, data));
        peer = null;
        closeLink();
    }

    private static void checkPrivateData(String call, ConnectionParameters parameters, int limit) {
        int n = parameters.privateData().length;
        if (n > limit) {
            throw new InvalidRequestException(call, n + " bytes of private data, the IB CM carries " + limit);
        }
    }

    /** A CM message from the peer: {@code from} is the peer id when it lives in this JVM. */
    synchronized void onCm(CmMessage m, SoftCmId from) {
        if (isClosed() || killed) {
            return;
        }
        switch (m.type()) {
            case MRA:
                if (state == State.CONNECT) {
                    cancelTimer();
                    cmTimer = fabric.timer.schedule(this::connectTimedOut, MRA_SERVICE_TIMEOUT_MS,
                            TimeUnit.MILLISECONDS);
                }
                break;
            case REP:
                if (state != State.CONNECT) {
                    return;
                }
                cancelTimer();
                peer = from;
                try {
                    qp.connectTo(from == null ? null : from.qp, link);
                    // ib_cm's REP handler: the peer's rnr_retry_count, and its resources crossed (what it
                    // answers is what this side may ask); the transport retries stay this side's own
                    readyQueuePair(m, m.initiatorDepth(), m.responderResources(), connectParameters.retryCount(),
                            m.rnrRetryCount());
                } catch (VerbsException e) {
                    state = State.REJECTED;
                    sendToPeer(CmMessage.reject(CmEvent.Rejected.CONSUMER_DEFINED, new byte[0]));
                    post(new CmEvent.ConnectError(handle, -e.errno()));
                    return;
                }
                state = State.ESTABLISHED;
                sendToPeer(CmMessage.of(CmMessage.Type.RTU));
                post(new CmEvent.Established(handle, m.privateData(), null));
                break;
            case RTU:
                if (state == State.ACCEPTED) {
                    cancelTimer();
                    state = State.ESTABLISHED;
                    post(new CmEvent.Established(handle, new byte[0], null));
                }
                break;
            case REJ:
                if (state == State.CONNECT || state == State.ACCEPTED) {
                    cancelTimer();
                    state = State.REJECTED;
                    closeLink();
                    post(new CmEvent.Rejected(handle, m.status(), m.privateData()));
                }
                break;
            case DREQ:
                if (state == State.ESTABLISHED || state == State.ACCEPTED) {
                    cancelTimer();
                    state = State.DISCONNECT_RECEIVED;
                    post(new CmEvent.Disconnected(handle));
                } else if (state == State.DISCONNECT_SENT) {
                    sendToPeer(CmMessage.of(CmMessage.Type.DREP));
                }
                break;
            case DREP:
                if (state == State.DISCONNECT_SENT) {
                    disconnected();
                }
                break;
            default:
                break;
        }
    }

    // ---------------------------------------------------------------- disconnecting

    @Override
    public synchronized void disconnect() {
        checkOpen("rdma_disconnect");
        switch (state) {
            case ESTABLISHED:
            case ACCEPTED:
            case CONNECT:
                cancelTimer();
                toError();
                state = State.DISCONNECT_SENT;
                sendToPeer(CmMessage.of(CmMessage.Type.DREQ));
                // a peer that never answers still lets the id leave, after the CM timeout
                cmTimer = fabric.timer.schedule(this::dreqTimedOut, fabric.cmTimeoutMs, TimeUnit.MILLISECONDS);
                break;
            case DISCONNECT_RECEIVED:
                toError();
                sendToPeer(CmMessage.of(CmMessage.Type.DREP));
                disconnectedAfterPeer();
                break;
            case DISCONNECT_SENT:
            case DISCONNECTED:
                break; // benign, as EINVAL after the peer went away is
            default:
                throw new InvalidStateException("rdma_disconnect", "the id is " + state);
        }
    }

    private void toError() {
        SoftQueuePair q = qp;
        if (q != null && q.state() != QpState.ERR && q.state() != QpState.RESET) {
            q.modify(QpAttributes.of().state(QpState.ERR));
        }
    }

    private synchronized void dreqTimedOut() {
        if (state == State.DISCONNECT_SENT) {
            disconnected();
        }
    }

    /** This side sent the DREQ and heard back (or gave up): DISCONNECTED, then timewait. */
    private void disconnected() {
        cancelTimer();
        state = State.DISCONNECTED;
        closeLink();
        post(new CmEvent.Disconnected(handle));
        scheduleTimewaitExit();
    }

    /** The peer disconnected first and this side answered: only timewait is left. */
    private void disconnectedAfterPeer() {
        state = State.DISCONNECTED;
        closeLink();
        scheduleTimewaitExit();
    }

    private void scheduleTimewaitExit() {
        fabric.schedule(() -> post(new CmEvent.TimewaitExit(handle)), fabric.timewaitMs);
    }

    @Override
    public void onLinkClosed(LinkConnection connection) {
        peerVanished();
    }

    /** The peer's process died (or was killed by fault injection): its kernel's DREQ, in effect. */
    synchronized void peerVanished() {
        if (isClosed()) {
            return;
        }
        peer = null;
        link = null;
        switch (state) {
            case ESTABLISHED:
            case ACCEPTED:
                state = State.DISCONNECT_RECEIVED;
                cancelTimer();
                post(new CmEvent.Disconnected(handle));
                break;
            case CONNECT:
                state = State.REJECTED;
                cancelTimer();
                post(new CmEvent.ConnectError(handle, -VerbsException.ECONNRESET));
                break;
            case DISCONNECT_SENT:
                disconnected();
                break;
            default:
                break;
        }
    }

    // ---------------------------------------------------------------- TcpLink.Endpoint

    @Override
    public void onCm(LinkConnection via, CmMessage message) {
        if (state == State.LISTEN && message.type() == CmMessage.Type.REQ) {
            // a link outlives the listener that accepted it: a REQ goes to whoever listens there now
            SoftCmListener now = isClosed() ? SoftCmListener.find(message.destination()) : null;
            (now != null && now.id.fabric == fabric ? now : listening).onConnectRequest(message, null, via);
        } else {
            onCm(message, null);
        }
    }

    @Override
    public Packet onRequest(Packet request) {
        SoftQueuePair q = qp;
        return q == null ? null : q.responder.onRequest(request);
    }

    @Override
    public void responded() {
        SoftQueuePair q = qp;
        if (q != null) {
            q.responder.responded();
        }
    }

    @Override
    public boolean transmits() {
        SoftQueuePair q = qp;
        return q == null || q.transmits();
    }

    @Override
    public void onResponse(Packet response) {
        SoftQueuePair q = qp;
        if (q != null) {
            q.completer.onResponse(response);
        }
    }

    // ---------------------------------------------------------------- channel, multicast

    @Override
    public void migrate(EventChannel to) {
        checkOpen("rdma_migrate_id");
        SoftEventChannel target = SoftEventChannel.of(to, "rdma_migrate_id");
        synchronized (this) {
            channel.remove(this);
            target.add(this);
            channel = target;
        }
    }

    @Override
    public synchronized void joinMulticast(InetSocketAddress group) {
        checkOpen("rdma_join_multicast");
        if (portSpace != PortSpace.UDP) {
            throw new InvalidRequestException("rdma_join_multicast", "multicast needs a UDP port space id");
        }
        if (port == null) {
            throw new InvalidStateException("rdma_join_multicast", "resolve or bind the id's address first");
        }
        if (!group.getAddress().isMulticastAddress()) {
            throw new InvalidRequestException("rdma_join_multicast", group + " is not a multicast address");
        }
        if (!memberships.join(group, qp)) {
            throw new InvalidRequestException("rdma_join_multicast", "the id already joined " + group);
        }
        byte[] mgid = SoftPort.multicastGid(group.getAddress());
        UdParameters ud = new UdParameters(SoftFabric.MULTICAST_QPN, SoftFabric.UDP_QKEY,
                AddressVector.global(mgid, port.portNum));
        fabric.execute(() -> post(new CmEvent.MulticastJoin(handle, ud)));
    }

    @Override
    public synchronized void leaveMulticast(InetSocketAddress group) {
        checkOpen("rdma_leave_multicast");
        if (!memberships.leave(group, qp)) {
            throw new InvalidRequestException("rdma_leave_multicast", "the id has not joined " + group);
        }
    }

    // ---------------------------------------------------------------- faults and teardown

    /** Fault injection: the peer of this id dies without a word; this id hears what its kernel would say. */
    void killPeer() {
        SoftCmId p;
        LinkConnection l;
        synchronized (this) {
            p = peer;
            l = link;
        }
        if (p != null) {
            p.killed = true;
            SoftQueuePair q = p.qp;
            if (q != null) {
                q.drop();
            }
            fabric.execute(this::peerVanished);
        } else if (l != null) {
            l.abort();
            fabric.execute(this::peerVanished);
        }
    }

    /** Fault injection: everything between this id's QP and its peer's is lost from now on. */
    void dropConnection() {
        SoftQueuePair q = qp;
        if (q != null) {
            q.drop();
        }
        SoftCmId p = peer;
        if (p != null && p.qp != null) {
            p.qp.drop();
        }
        LinkConnection l = link;
        if (l != null) {
            l.drop();
        }
    }

    /** Device removal: DEVICE_REMOVAL obliges the owner to destroy the id. */
    void deviceRemoved(SoftDevice device) {
        boolean affected;
        synchronized (this) {
            affected = port != null && port.device == device;
        }
        if (affected) {
            post(new CmEvent.DeviceRemoval(handle));
        }
    }

    private void cancelTimer() {
        if (cmTimer != null) {
            cmTimer.cancel(false);
            cmTimer = null;
        }
    }

    private void closeLink() {
        LinkConnection l = link;
        link = null;
        if (l != null) {
            l.close();
        }
    }

    @Override
    void destroy() {
        State was;
        synchronized (this) {
            was = state;
            cancelTimer();
            if (was == State.ESTABLISHED || was == State.ACCEPTED || was == State.CONNECT) {
                // destroying a connected id sends the DREQ the peer expects
                sendToPeer(CmMessage.of(CmMessage.Type.DREQ));
            } else if (was == State.REQUEST_RECEIVED) {
                sendToPeer(CmMessage.reject(CmEvent.Rejected.CONSUMER_DEFINED, new byte[0]));
                releaseListener();
            }
            if (was == State.LISTEN) {
                listening.unregister();
            }
            memberships.leaveAll(qp);
        }
        if (listening != null) {
            listening.close();
        } else {
            closeQuietly(server);
        }
        SoftQueuePair q = qp;
        qp = null;
        if (q != null) {
            q.forceClose();
        }
        closeLink();
        channel.remove(this);
    }
}
