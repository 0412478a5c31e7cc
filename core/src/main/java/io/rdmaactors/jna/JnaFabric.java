package io.rdmaactors.jna;

import com.sun.jna.Pointer;
import io.rdmaactors.verbs.CmId;
import io.rdmaactors.verbs.Device;
import io.rdmaactors.verbs.EventChannel;
import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.InvalidRequestException;
import io.rdmaactors.verbs.PortSpace;
import io.rdmaactors.verbs.ResourceClosedException;
import io.rdmaactors.verbs.ResourceKind;
import io.rdmaactors.verbs.ResourceLedger;
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

    /** Destroy order on shutdown: QP, AH, SRQ, CQ, channel, MR, PD, CM id, event channel. */
    private static final List<ResourceKind> TEARDOWN = List.of(ResourceKind.MULTICAST_MEMBERSHIP,
            ResourceKind.QUEUE_PAIR, ResourceKind.ADDRESS_HANDLE, ResourceKind.SHARED_RECEIVE_QUEUE,
            ResourceKind.COMPLETION_QUEUE, ResourceKind.COMPLETION_CHANNEL, ResourceKind.MEMORY_REGION,
            ResourceKind.PROTECTION_DOMAIN, ResourceKind.CM_ID, ResourceKind.EVENT_CHANNEL);

    private final ResourceLedger ledger = new ResourceLedger();
    private final Set<JnaResource> live = ConcurrentHashMap.newKeySet();
    private final List<JnaDevice> devices = new ArrayList<>();
    private final long deviceList;
    private volatile boolean closed;

    JnaFabric() {
        int[] count = new int[1];
        deviceList = Rdmacm.rdma_get_devices(count);
        if (deviceList != 0) {
            Pointer list = new Pointer(deviceList);
            for (int i = 0; i < count[0]; i++) {
                devices.add(new JnaDevice(this, Pointer.nativeValue(list.getPointer(8L * i))));
            }
        }
    }

    @Override
    public String provider() {
        return "jna";
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
        long channel = Rdmacm.rdma_create_event_channel();
        if (channel == 0) {
            throw NativeLibraries.lastError("rdma_create_event_channel");
        }
        return new JnaEventChannel(this, channel);
    }

    @Override
    public CmId createCmId(EventChannel channel, PortSpace portSpace) {
        checkOpen("rdma_create_id");
        return JnaEventChannel.of(channel, "rdma_create_id").createId(portSpace);
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
            Rdmacm.rdma_free_devices(deviceList);
        }
    }
}
