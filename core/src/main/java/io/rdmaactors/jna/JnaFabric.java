package io.rdmaactors.jna;

import io.rdmaactors.jna.binding.RdmaCore;
import com.sun.jna.Pointer;
import io.rdmaactors.jna.binding.RdmaAddrinfo;
import io.rdmaactors.verbs.AddressInfo;
import io.rdmaactors.verbs.CmId;
import io.rdmaactors.verbs.Device;
import io.rdmaactors.verbs.EventChannel;
import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.InvalidRequestException;
import io.rdmaactors.verbs.PortSpace;
import io.rdmaactors.verbs.QpType;
import io.rdmaactors.verbs.ResourceClosedException;
import io.rdmaactors.verbs.ResourceKind;
import io.rdmaactors.verbs.ResourceLedger;
import io.rdmaactors.verbs.VerbsException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The rdma-core fabric. Its devices are the verbs contexts librdmacm opened ({@code rdma_get_devices}),
 * so PDs and CQs made on them are usable with the QPs of CM ids.
 */
final class JnaFabric implements Fabric {

    /** getaddrinfo's codes that name an errno. */
    private static final int EAI_AGAIN = -3;
    private static final int EAI_MEMORY = -10;
    private static final int EAI_SYSTEM = -11;

    /** Destroy order on shutdown: QP, AH, SRQ, CQ, channel, MR, PD, CM id, event channel. */
    private static final List<ResourceKind> TEARDOWN = List.of(ResourceKind.MULTICAST_MEMBERSHIP,
            ResourceKind.QUEUE_PAIR, ResourceKind.ADDRESS_HANDLE, ResourceKind.SHARED_RECEIVE_QUEUE,
            ResourceKind.COMPLETION_QUEUE, ResourceKind.COMPLETION_CHANNEL, ResourceKind.MEMORY_REGION,
            ResourceKind.PROTECTION_DOMAIN, ResourceKind.CM_ID, ResourceKind.EVENT_CHANNEL);

    private final ResourceLedger ledger = new ResourceLedger();
    private final Set<JnaResource> live = ConcurrentHashMap.newKeySet();
    private final List<JnaDevice> devices = new ArrayList<>();
    private final long deviceList;
    private final String provider;
    /** How the fabric and its resources call rdma-core. */
    final RdmaCore core;
    private volatile boolean closed;

    /**
     * @param provider its name ({@code jna}, or {@code ffm} where rdma-core is called through FFM)
     * @param core     the binding its calls go through
     */
    JnaFabric(String provider, RdmaCore core) {
        this.provider = provider;
        this.core = core;
        int[] count = new int[1];
        deviceList = core.rdma_get_devices(count);
        if (deviceList != 0) {
            Pointer list = new Pointer(deviceList);
            for (int i = 0; i < count[0]; i++) {
                devices.add(new JnaDevice(this, Pointer.nativeValue(list.getPointer(8L * i))));
            }
        }
    }

    @Override
    public String provider() {
        return provider;
    }

    @Override
    public List<Device> devices() {
        checkOpen("ibv_get_device_list");
        return List.copyOf(devices);
    }

    @Override
    public Device device(String name) {
        checkOpen("ibv_open_device");
        for (JnaDevice d : devices) {
            if (d.name().equals(name)) {
                return d;
            }
        }
        throw new InvalidRequestException("ibv_open_device", "no device named " + name);
    }

    /** The device of a verbs context pointer, as CM ids name it. */
    JnaDevice device(long context) {
        for (JnaDevice d : devices) {
            if (d.context == context) {
                return d;
            }
        }
        return null;
    }

    @Override
    public EventChannel createEventChannel() {
        checkOpen("rdma_create_event_channel");
        long channel = core.rdma_create_event_channel();
        if (channel == 0) {
            throw core.lastError("rdma_create_event_channel");
        }
        return new JnaEventChannel(this, channel);
    }

    @Override
    public CmId createCmId(EventChannel channel, PortSpace portSpace) {
        checkOpen("rdma_create_id");
        return JnaEventChannel.of(channel, "rdma_create_id").createId(portSpace);
    }

    @Override
    public List<AddressInfo> addressInfo(String node, String service, boolean passive, PortSpace portSpace) {
        checkOpen("rdma_getaddrinfo");
        RdmaAddrinfo hints = new RdmaAddrinfo();
        hints.ai_flags = passive ? RdmaAddrinfo.RAI_PASSIVE : 0;
        hints.ai_family = RdmaAddrinfo.AF_INET;
        hints.ai_qp_type = (portSpace == PortSpace.UDP ? QpType.UD : QpType.RC).code();
        hints.ai_port_space = portSpace.code();
        long[] result = new long[1];
        int rc = core.rdma_getaddrinfo(node, service, hints, result);
        if (rc != 0) {
            throw addressInfoFailure(rc, node, service);
        }
        List<AddressInfo> answers = new ArrayList<>();
        try {
            for (long at = result[0]; at != 0; at = new Pointer(at).getLong(RdmaAddrinfo.NEXT)) {
                Pointer ai = new Pointer(at);
                answers.add(new AddressInfo(SocketAddresses.decode(ai.getLong(RdmaAddrinfo.SRC_ADDR)),
                        SocketAddresses.decode(ai.getLong(RdmaAddrinfo.DST_ADDR)), portSpace,
                        ai.getInt(RdmaAddrinfo.QP_TYPE) == QpType.UD.code() ? QpType.UD : QpType.RC));
            }
        } finally {
            core.rdma_freeaddrinfo(result[0]);
        }
        return answers;
    }

    /** rdma_getaddrinfo passes getaddrinfo's EAI_* codes through; its own failures set errno. */
    private VerbsException addressInfoFailure(int rc, String node, String service) {
        String what = "cannot resolve node " + node + ", service " + service + ": ";
        if (rc == -1 || rc == EAI_SYSTEM) {
            int errno = core.errno();
            return VerbsException.of("rdma_getaddrinfo", errno, what + core.strerror(errno));
        }
        int errno = rc == EAI_AGAIN ? VerbsException.EAGAIN : rc == EAI_MEMORY ? VerbsException.ENOMEM
                : VerbsException.ENOENT;
        return new VerbsException("rdma_getaddrinfo", errno, what + core.gai_strerror(rc));
    }

    @Override
    public ResourceLedger ledger() {
        return ledger;
    }

    void checkOpen(String call) {
        if (closed) {
            throw new ResourceClosedException(call, "the fabric is closed");
        }
    }

    void track(JnaResource resource) {
        live.add(resource);
    }

    void untrack(JnaResource resource) {
        live.remove(resource);
    }

    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        List<JnaResource> order = new ArrayList<>(live);
        order.sort(Comparator.comparingInt(r -> TEARDOWN.indexOf(r.kind())));
        for (JnaResource r : order) {
            r.close(true);
        }
        for (JnaDevice d : devices) {
            d.shutdown();
        }
        if (deviceList != 0) {
            core.rdma_free_devices(deviceList);
        }
    }
}
