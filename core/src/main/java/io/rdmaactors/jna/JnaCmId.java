package io.rdmaactors.jna;

import com.sun.jna.Pointer;
import io.rdmaactors.cm.CmEvent;
import io.rdmaactors.cm.CmEventType;
import io.rdmaactors.jna.binding.IbvQpInitAttr;
import io.rdmaactors.jna.binding.RdmaCmId;
import io.rdmaactors.jna.binding.RdmaConnParam;
import io.rdmaactors.verbs.CmId;
import io.rdmaactors.verbs.ConnectionParameters;
import io.rdmaactors.verbs.Device;
import io.rdmaactors.verbs.EventChannel;
import io.rdmaactors.verbs.InvalidRequestException;
import io.rdmaactors.verbs.InvalidStateException;
import io.rdmaactors.verbs.PortSpace;
import io.rdmaactors.verbs.ProtectionDomain;
import io.rdmaactors.verbs.QpInitAttributes;
import io.rdmaactors.verbs.QueuePair;
import io.rdmaactors.verbs.ResourceKind;
import io.rdmaactors.verbs.VerbsException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An {@code rdma_cm_id}. librdmacm checks the id's state itself; its EINVAL on a call made in the
 * wrong state becomes {@link InvalidStateException}, as on the soft fabric.
 */
final class JnaCmId extends JnaResource implements CmId {

    /** Errnos of a destination no device reaches, which the kernel reports before any event. */
    private static final Set<Integer> UNRESOLVABLE = Set.of(VerbsException.ENETUNREACH, VerbsException.EHOSTUNREACH,
            VerbsException.EADDRNOTAVAIL, VerbsException.ENODEV);

    /**
     * Handles are counted, not the id's address: an id created after one was destroyed may get its
     * address while an event of the destroyed one, fetched before it went, is still being routed.
     */
    private static final AtomicLong HANDLES = new AtomicLong();

    private final long handle = HANDLES.incrementAndGet();
    private final PortSpace portSpace;
    private final Set<InetSocketAddress> groups = ConcurrentHashMap.newKeySet();
    private volatile JnaEventChannel channel;
    private volatile JnaQueuePair queuePair;
    private volatile boolean disconnected;

    JnaCmId(JnaFabric fabric, JnaEventChannel channel, long id, PortSpace portSpace) {
        super(fabric, ResourceKind.CM_ID, id);
        this.channel = channel;
        this.portSpace = portSpace;
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
    public EventChannel channel() {
        return channel;
    }

    /** Notes what an event tells about the id's state. */
    void observe(int event) {
        if (event == CmEventType.DISCONNECTED.code()) {
            disconnected = true;
        }
    }

    private void check(String call, int rc) {
        if (rc != 0) {
            int errno = core.errno();
            throw errno == VerbsException.EINVAL
                    ? new InvalidStateException(call, "the CM id cannot do this in its current state")
                    : core.failure(call, errno);
        }
    }

    @Override
    public void bind(InetSocketAddress address) {
        byte[] sockaddr = SocketAddresses.encode(address, "rdma_bind_addr");
        long id = enter("rdma_bind_addr");
        try {
            check("rdma_bind_addr", core.rdma_bind_addr(id, sockaddr));
        } finally {
            exit();
        }
    }

    @Override
    public void listen(int backlog) {
        long id = enter("rdma_listen");
        try {
            check("rdma_listen", core.rdma_listen(id, backlog));
        } finally {
            exit();
        }
    }

    @Override
    public void resolveAddress(InetSocketAddress source, InetSocketAddress destination, Duration timeout) {
        byte[] src = SocketAddresses.encode(source, "rdma_resolve_addr");
        byte[] dst = SocketAddresses.encode(destination, "rdma_resolve_addr");
        if (dst == null) {
            throw new InvalidRequestException("rdma_resolve_addr", "a destination is needed");
        }
        long id = enter("rdma_resolve_addr");
        try {
            if (core.rdma_resolve_addr(id, src, dst, millis(timeout)) != 0) {
                int errno = core.errno();
                if (!UNRESOLVABLE.contains(errno)) {
                    check("rdma_resolve_addr", -1);
                }
                // librdmacm fails at once where no route exists; the SPI promises ADDR_ERROR instead.
                channel.post(new CmEvent.AddrError(handle, -errno));
            }
        } finally {
            exit();
        }
    }

    @Override
    public void resolveRoute(Duration timeout) {
        long id = enter("rdma_resolve_route");
        try {
            check("rdma_resolve_route", core.rdma_resolve_route(id, millis(timeout)));
        } finally {
            exit();
        }
    }

    private static int millis(Duration timeout) {
        return (int) Math.min(Integer.MAX_VALUE, Math.max(1, timeout.toMillis()));
    }

    @Override
    public Device device() {
        long id = enter("rdma_cm_id.verbs");
        try {
            long context = new Pointer(id).getLong(RdmaCmId.VERBS);
            return context == 0 ? null : fabric.device(context);
        } finally {
            exit();
        }
    }

    @Override
    public int portNum() {
        long id = enter("rdma_cm_id.port_num");
        try {
            return Byte.toUnsignedInt(new Pointer(id).getByte(RdmaCmId.PORT_NUM));
        } finally {
            exit();
        }
    }

    @Override
    public QueuePair createQueuePair(ProtectionDomain pd, QpInitAttributes attributes) {
        JnaProtectionDomain jpd = JnaProtectionDomain.of(pd, "rdma_create_qp");
        IbvQpInitAttr init = JnaQueuePair.initAttr(attributes, "rdma_create_qp");
        long id = enter("rdma_create_qp");
        try {
            if (queuePair != null) {
                throw new InvalidStateException("rdma_create_qp", "the CM id has a QP already");
            }
            long pdPointer = jpd.enter("rdma_create_qp");
            try {
                check("rdma_create_qp", core.rdma_create_qp(id, pdPointer, init));
            } finally {
                jpd.exit();
            }
            queuePair = new JnaQueuePair(jpd, new Pointer(id).getLong(RdmaCmId.QP), this, attributes, init);
            return queuePair;
        } finally {
            exit();
        }
    }

    @Override
    public QueuePair queuePair() {
        return queuePair;
    }

    @Override
    public void destroyQueuePair() {
        JnaQueuePair qp = queuePair;
        if (qp != null) {
            qp.close();
        }
    }

    /** Called by the QP's destroy, which holds the QP closed against other calls. */
    void destroyQp() {
        core.rdma_destroy_qp(pointer);
    }

    void queuePairClosed(JnaQueuePair qp) {
        if (queuePair == qp) {
            queuePair = null;
        }
    }

    @Override
    public void connect(ConnectionParameters parameters) {
        int limit = portSpace == PortSpace.UDP ? ConnectionParameters.MAX_UD_PRIVATE_DATA
                : ConnectionParameters.MAX_CONNECT_PRIVATE_DATA;
        RdmaConnParam param = connParam(parameters, limit, "rdma_connect");
        long id = enter("rdma_connect");
        try {
            // checked after enter(), so a closed id (whose QP is gone) reads as closed, not as lacking a QP
            if (portSpace != PortSpace.UDP && queuePair == null) {
                throw new InvalidStateException("rdma_connect", "an RC connect needs the id's QP (rdma_create_qp)");
            }
            check("rdma_connect", core.rdma_connect(id, param));
        } finally {
            exit();
        }
    }

    @Override
    public void accept(ConnectionParameters parameters) {
        int limit = portSpace == PortSpace.UDP ? ConnectionParameters.MAX_UD_PRIVATE_DATA
                : ConnectionParameters.MAX_ACCEPT_PRIVATE_DATA;
        RdmaConnParam param = connParam(parameters, limit, "rdma_accept");
        long id = enter("rdma_accept");
        try {
            check("rdma_accept", core.rdma_accept(id, param));
        } finally {
            exit();
        }
    }

    private static RdmaConnParam connParam(ConnectionParameters p, int limit, String call) {
        byte[] data = p.privateData();
        if (data.length > limit) {
            throw new InvalidRequestException(call, "private data of " + data.length + " bytes exceeds " + limit);
        }
        RdmaConnParam param = new RdmaConnParam();
        param.privateData(data);
        param.responder_resources = (byte) p.responderResources();
        param.initiator_depth = (byte) p.initiatorDepth();
        param.retry_count = (byte) p.retryCount();
        param.rnr_retry_count = (byte) p.rnrRetryCount();
        return param;
    }

    @Override
    public void reject(byte[] privateData) {
        byte[] data = privateData == null ? new byte[0] : privateData.clone();
        if (data.length > ConnectionParameters.MAX_REJECT_PRIVATE_DATA) {
            throw new InvalidRequestException("rdma_reject", "private data of " + data.length + " bytes exceeds "
                    + ConnectionParameters.MAX_REJECT_PRIVATE_DATA);
        }
        long id = enter("rdma_reject");
        try {
            check("rdma_reject", core.rdma_reject(id, data.length == 0 ? null : data, (byte) data.length));
        } finally {
            exit();
        }
    }

    @Override
    public void disconnect() {
        long id = enter("rdma_disconnect");
        try {
            if (core.rdma_disconnect(id) != 0) {
                int errno = core.errno();
                // EINVAL once the peer has gone (DISCONNECTED seen) is benign, as rdma-core documents.
                if (!(errno == VerbsException.EINVAL && disconnected)) {
                    check("rdma_disconnect", -1);
                }
            }
        } finally {
            exit();
        }
    }

    @Override
    public void migrate(EventChannel target) {
        JnaEventChannel to = JnaEventChannel.of(target, "rdma_migrate_id");
        long id = enter("rdma_migrate_id");
        try {
            long ch = to.enter("rdma_migrate_id");
            try {
                check("rdma_migrate_id", core.rdma_migrate_id(id, ch));
            } finally {
                to.exit();
            }
            channel.remove(this);
            channel = to;
            to.add(this);
        } finally {
            exit();
        }
    }

    @Override
    public void joinMulticast(InetSocketAddress group) {
        byte[] address = SocketAddresses.encode(group, "rdma_join_multicast");
        long id = enter("rdma_join_multicast");
        try {
            check("rdma_join_multicast", core.rdma_join_multicast(id, address, 0));
            groups.add(group);
            fabric.ledger().opened(ResourceKind.MULTICAST_MEMBERSHIP);
        } finally {
            exit();
        }
    }

    @Override
    public void leaveMulticast(InetSocketAddress group) {
        byte[] address = SocketAddresses.encode(group, "rdma_leave_multicast");
        long id = enter("rdma_leave_multicast");
        try {
            check("rdma_leave_multicast", core.rdma_leave_multicast(id, address));
            if (groups.remove(group)) {
                fabric.ledger().closed(ResourceKind.MULTICAST_MEMBERSHIP);
            }
        } finally {
            exit();
        }
    }

    @Override
    public InetSocketAddress localAddress() {
        long id = enter("rdma_get_local_addr");
        try {
            return SocketAddresses.decode(id + RdmaCmId.SRC_ADDR);
        } finally {
            exit();
        }
    }

    @Override
    public InetSocketAddress remoteAddress() {
        long id = enter("rdma_get_peer_addr");
        try {
            return SocketAddresses.decode(id + RdmaCmId.DST_ADDR);
        } finally {
            exit();
        }
    }

    @Override
    String destroyCall() {
        return "rdma_destroy_id";
    }

    /** The QP goes first (flushed); memberships end with the id, as rdma_destroy_id leaves them. */
    @Override
    int destroy(boolean force) {
        JnaQueuePair qp = queuePair;
        if (qp != null) {
            qp.close(true);
        }
        for (InetSocketAddress g : groups) {
            if (groups.remove(g)) {
                fabric.ledger().closed(ResourceKind.MULTICAST_MEMBERSHIP);
            }
        }
        return core.rdma_destroy_id(pointer) == 0 ? 0 : core.errno();
    }

    @Override
    void destroyed() {
        channel.remove(this);
    }
}
