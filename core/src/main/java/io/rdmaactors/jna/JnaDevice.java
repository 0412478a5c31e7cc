package io.rdmaactors.jna;

import io.rdmaactors.jna.binding.RdmaCore;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import io.rdmaactors.cm.AsyncEvent;
import io.rdmaactors.cm.EventSource;
import io.rdmaactors.jna.binding.ContextOps;
import io.rdmaactors.jna.binding.IbvContext;
import io.rdmaactors.jna.binding.IbvDeviceAttr;
import io.rdmaactors.jna.binding.IbvPortAttr;
import io.rdmaactors.verbs.CompletionChannel;
import io.rdmaactors.verbs.CompletionQueue;
import io.rdmaactors.verbs.Device;
import io.rdmaactors.verbs.DeviceAttributes;
import io.rdmaactors.verbs.InvalidRequestException;
import io.rdmaactors.verbs.LinkLayer;
import io.rdmaactors.verbs.Mtu;
import io.rdmaactors.verbs.PortAttributes;
import io.rdmaactors.verbs.PortState;
import io.rdmaactors.verbs.ProtectionDomain;
import io.rdmaactors.verbs.ResourceClosedException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** A verbs context that librdmacm opened; the fabric owns it and releases it on close. */
final class JnaDevice implements Device {

    private static final int LINK_LAYER_INFINIBAND = 1;
    private static final int LINK_LAYER_ETHERNET = 2;

    final JnaFabric fabric;
    private final RdmaCore core;
    final long context;
    final ContextOps ops;
    private final String name;
    private volatile JnaAsyncEvents asyncEvents;
    private volatile boolean alive = true;
    /** DEVICE_FATAL arrived: nothing new can be made on the device; its async events still drain. */
    private volatile boolean removed;
    /** QP numbers are the device's: completions name their QP by number. */
    private final Map<Integer, JnaQueuePair> queuePairs = new ConcurrentHashMap<>();

    JnaDevice(JnaFabric fabric, long context) {
        this.fabric = fabric;
        this.core = fabric.core;
        this.context = context;
        this.ops = core.contextOps(context);
        this.name = core.ibv_get_device_name(new Pointer(context).getLong(IbvContext.DEVICE));
    }

    @Override
    public String name() {
        return name;
    }

    void register(JnaQueuePair qp) {
        queuePairs.put(qp.qpNum(), qp);
    }

    void unregister(JnaQueuePair qp) {
        queuePairs.remove(qp.qpNum(), qp);
    }

    /** The QP a completion names by number, or null. */
    JnaQueuePair queuePair(int qpNum) {
        return queuePairs.get(qpNum);
    }

    void checkAlive(String call) {
        checkOpen(call);
        if (removed) {
            throw new ResourceClosedException(call, "device " + name + " was removed (DEVICE_FATAL)");
        }
    }

    /** Open: not closed by the fabric, though perhaps removed. */
    void checkOpen(String call) {
        fabric.checkOpen(call);
        if (!alive) {
            throw new ResourceClosedException(call, "device " + name + " is closed");
        }
    }

    void removed() {
        removed = true;
    }

    @Override
    public DeviceAttributes query() {
        checkAlive("ibv_query_device");
        IbvDeviceAttr a = new IbvDeviceAttr();
        int rc = core.ibv_query_device(context, a);
        if (rc != 0) {
            throw core.failure("ibv_query_device", rc);
        }
        return new DeviceAttributes(name, Native.toString(a.fw_ver, StandardCharsets.US_ASCII.name()),
                Long.reverseBytes(a.node_guid), a.vendor_id, a.vendor_part_id, Byte.toUnsignedInt(a.phys_port_cnt),
                a.max_qp, a.max_qp_wr, a.max_sge, a.max_cq, a.max_cqe, a.max_mr, a.max_mr_size, a.max_pd,
                a.max_qp_rd_atom, a.max_srq, a.max_srq_wr, a.max_srq_sge, a.max_mcast_grp, a.max_mcast_qp_attach,
                (a.device_cap_flags & IbvDeviceAttr.AUTO_PATH_MIG) != 0, a.atomic_cap != 0);
    }

    @Override
    public PortAttributes queryPort(int portNum) {
        checkAlive("ibv_query_port");
        if (portNum < 1 || portNum > 255) {
            throw new InvalidRequestException("ibv_query_port", "no port " + portNum);
        }
        IbvPortAttr a = new IbvPortAttr();
        int rc = core.ibv_query_port(context, (byte) portNum, a);
        if (rc != 0) {
            throw core.failure("ibv_query_port", rc);
        }
        List<byte[]> gids = new ArrayList<>();
        for (int i = 0; i < a.gid_tbl_len; i++) {
            byte[] gid = new byte[16];
            if (core.ibv_query_gid(context, (byte) portNum, i, gid) != 0 || isZero(gid)) {
                break;
            }
            gids.add(gid);
        }
        return new PortAttributes(portNum, PortState.fromCode(a.state), mtu(a.max_mtu), mtu(a.active_mtu),
                Short.toUnsignedInt(a.lid), linkLayerOf(a.link_layer), gids);
    }

    private static boolean isZero(byte[] gid) {
        for (byte b : gid) {
            if (b != 0) {
                return false;
            }
        }
        return true;
    }

    private static Mtu mtu(int code) {
        return code >= 1 && code <= 5 ? Mtu.fromCode(code) : Mtu.MTU_256;
    }

    private static LinkLayer linkLayerOf(int code) {
        switch (code) {
            case LINK_LAYER_INFINIBAND: return LinkLayer.INFINIBAND;
            case LINK_LAYER_ETHERNET: return LinkLayer.ETHERNET;
            default: return LinkLayer.UNSPECIFIED;
        }
    }

    @Override
    public ProtectionDomain allocateProtectionDomain() {
        checkAlive("ibv_alloc_pd");
        long pd = core.ibv_alloc_pd(context);
        if (pd == 0) {
            throw core.lastError("ibv_alloc_pd");
        }
        return new JnaProtectionDomain(this, pd);
    }

    @Override
    public CompletionChannel createCompletionChannel() {
        checkAlive("ibv_create_comp_channel");
        long channel = core.ibv_create_comp_channel(context);
        if (channel == 0) {
            throw core.lastError("ibv_create_comp_channel");
        }
        return new JnaCompletionChannel(this, channel);
    }

    @Override
    public CompletionQueue createCompletionQueue(int cqe, CompletionChannel channel) {
        checkAlive("ibv_create_cq");
        if (cqe < 1) {
            throw new InvalidRequestException("ibv_create_cq", "cqe must be positive, not " + cqe);
        }
        JnaCompletionChannel ch = channel == null ? null : JnaCompletionChannel.of(channel, "ibv_create_cq");
        long chPointer = ch == null ? 0 : ch.enter("ibv_create_cq");
        try {
            long cq = core.ibv_create_cq(context, cqe, 0, chPointer, 0);
            if (cq == 0) {
                throw core.lastError("ibv_create_cq");
            }
            return new JnaCompletionQueue(this, cq, ch);
        } finally {
            if (ch != null) {
                ch.exit();
            }
        }
    }

    @Override
    public synchronized EventSource<AsyncEvent> asyncEvents() {
        checkOpen("ibv_get_async_event");
        if (asyncEvents == null) {
            asyncEvents = new JnaAsyncEvents(this);
        }
        return asyncEvents;
    }

    @Override
    public boolean isAlive() {
        return alive && !removed;
    }

    /** The fabric closes: stop the async event source; librdmacm closes the context. */
    synchronized void shutdown() {
        alive = false;
        if (asyncEvents != null) {
            asyncEvents.close();
        }
    }

    /** The link layer of a port, for the checks that depend on it (APM). */
    LinkLayer linkLayer(int portNum) {
        return queryPort(portNum).linkLayer();
    }

    @Override
    public String toString() {
        return "JnaDevice[" + name + "]";
    }
}
