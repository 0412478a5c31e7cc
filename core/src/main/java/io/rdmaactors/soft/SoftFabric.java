package io.rdmaactors.soft;

import io.rdmaactors.soft.link.TcpLinks;
import io.rdmaactors.verbs.AddressInfo;
import io.rdmaactors.verbs.CmId;
import io.rdmaactors.verbs.Device;
import io.rdmaactors.verbs.EventChannel;
import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.FaultInjector;
import io.rdmaactors.verbs.InvalidRequestException;
import io.rdmaactors.verbs.PortSpace;
import io.rdmaactors.verbs.QpType;
import io.rdmaactors.verbs.ResourceClosedException;
import io.rdmaactors.verbs.ResourceLedger;
import io.rdmaactors.verbs.VerbsException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The software RDMA fabric: devices with two ports each, in-memory transport between QPs of this
 * JVM and TCP loopback between processes. See docs/soft-fabric.md for the semantics it keeps.
 */
public final class SoftFabric implements Fabric {

    private static final AtomicInteger INSTANCES = new AtomicInteger();
    /** librdmacm's Q_Key for UD ids ({@code RDMA_UDP_QKEY}). */
    static final int UDP_QKEY = 0x01234567;
    /** The QP number that addresses a multicast group. */
    static final int MULTICAST_QPN = 0xFFFFFF;

    final String id = "soft-" + INSTANCES.incrementAndGet();
    /** What its threads' names start with before its id (option {@code threads.prefix}). */
    final String threadsPrefix;
    final long cmTimeoutMs;
    final long timewaitMs;
    /** False with option {@code transport} {@code tcp} or {@code shm}: ids of one JVM meet over a link too, as between processes. */
    final boolean localTransport;
    /**
     * What carries a request between QPs of this JVM after its post returned, as a device executes
     * it; null with option {@code wire=sync}, where it runs inside its post (deterministic, for tests).
     */
    private final SoftWire wire;
    final TcpLinks links;
    private final List<SoftDevice> devices = new CopyOnWriteArrayList<>();
    private final ResourceLedger ledger = new ResourceLedger();
    private final Set<SoftResource> live = ConcurrentHashMap.newKeySet();
    private final Map<ByteBuffer, Set<SoftQueuePair>> multicastGroups = new ConcurrentHashMap<>();
    private final AtomicLong handles = new AtomicLong();
    final ScheduledThreadPoolExecutor timer;
    final SoftFaultInjector faults = new SoftFaultInjector(this);
    private volatile boolean closed;

    SoftFabric(SoftOptions options) {
        this.cmTimeoutMs = options.cmTimeoutMs();
        this.timewaitMs = options.timewaitMs();
        this.threadsPrefix = options.threadsPrefix();
        this.localTransport = options.localTransport();
        this.wire = options.asyncWire() ? new SoftWire(threadsPrefix + id + "-wire") : null;
        this.timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, threadsPrefix + id + "-timer");
            t.setDaemon(true);
            return t;
        });
        timer.setRemoveOnCancelPolicy(true);
        this.links = new TcpLinks(threadsPrefix + id, timer, ledger, options.links());
        for (int i = 0; i < options.devices(); i++) {
            devices.add(new SoftDevice(this, i));
        }
    }

    @Override
    public String provider() {
        return "soft";
    }

    @Override
    public List<Device> devices() {
        checkOpen("ibv_get_device_list");
        return List.copyOf(devices);
    }

    @Override
    public Device device(String name) {
        for (SoftDevice d : devices) {
            if (d.name().equals(name)) {
                return d;
            }
        }
        throw new InvalidRequestException("ibv_open_device", "no device named " + name);
    }

    @Override
    public EventChannel createEventChannel() {
        checkOpen("rdma_create_event_channel");
        return new SoftEventChannel(this);
    }

    @Override
    public CmId createCmId(EventChannel channel, PortSpace portSpace) {
        checkOpen("rdma_create_id");
        if (portSpace != PortSpace.TCP && portSpace != PortSpace.UDP) {
            throw new InvalidRequestException("rdma_create_id", "the soft fabric has the TCP and UDP port spaces");
        }
        return new SoftCmId(this, SoftEventChannel.of(channel, "rdma_create_id"), portSpace);
    }

    /** Numeric services only; the first IPv4 address of the node, as rdma_getaddrinfo answers once. */
    @Override
    public List<AddressInfo> addressInfo(String node, String service, boolean passive, PortSpace portSpace) {
        checkOpen("rdma_getaddrinfo");
        int port;
        try {
            port = Integer.parseInt(service);
        } catch (NumberFormatException e) {
            port = -1;
        }
        if (port < 0 || port > 65535) {
            throw new VerbsException("rdma_getaddrinfo", VerbsException.ENOENT, "service " + service
                    + " is not a port number (the soft fabric knows no service names)");
        }
        InetAddress address;
        if (node == null) {
            if (!passive) {
                throw new VerbsException("rdma_getaddrinfo", VerbsException.ENOENT, "no node to connect to");
            }
            address = SoftCmId.wildcard();
        } else {
            try {
                address = Arrays.stream(InetAddress.getAllByName(node)).filter(a -> a instanceof Inet4Address)
                        .findFirst().orElseThrow(() -> new UnknownHostException("no IPv4 address"));
            } catch (UnknownHostException e) {
                throw new VerbsException("rdma_getaddrinfo", VerbsException.ENOENT, "cannot resolve node " + node
                        + ": " + e.getMessage(), e);
            }
        }
        InetSocketAddress resolved = new InetSocketAddress(address, port);
        return List.of(new AddressInfo(passive ? resolved : null, passive ? null : resolved, portSpace,
                portSpace == PortSpace.UDP ? QpType.UD : QpType.RC));
    }

    @Override
    public ResourceLedger ledger() {
        return ledger;
    }

    @Override
    public Optional<FaultInjector> faults() {
        return Optional.of(faults);
    }

    void checkOpen(String call) {
        if (closed) {
            throw new ResourceClosedException(call, "the fabric is closed");
        }
    }

    long nextHandle() {
        return handles.incrementAndGet();
    }

    void track(SoftResource resource) {
        live.add(resource);
    }

    void untrack(SoftResource resource) {
        live.remove(resource);
    }

    /** The CM ids still open, for fault injection that names a connection by its addresses. */
    List<CmId> liveCmIds() {
        List<CmId> ids = new ArrayList<>();
        for (SoftResource r : live) {
            if (r instanceof SoftCmId id && !id.isClosed()) {
                ids.add(id);
            }
        }
        return ids;
    }

    /** Runs later on the fabric's timer thread, unless the fabric closed meanwhile. */
    void schedule(Runnable task, long delayMs) {
        if (!closed) {
            try {
                timer.schedule(task, delayMs, TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException e) {
                // closing: the task's resources are being torn down anyway
            }
        }
    }

    void execute(Runnable task) {
        schedule(task, 0);
    }

    /**
     * Delivers a CM message between ids of this JVM: on the wire, after the packets sent before it
     * (a DREQ does not overtake the ACK of the last request, as on a real wire), or on the timer
     * thread with {@code wire=sync}, where packets are carried inside their post and an id's
     * message must not run inside its sender's lock.
     */
    void carryCm(Runnable delivery) {
        if (wire != null) {
            onWire(delivery);
        } else {
            execute(delivery);
        }
    }

    /**
     * Runs what the wire between two QPs of this JVM carries: on the wire thread, in order, or
     * at once with option {@code wire=sync}. Dropped once the fabric closes.
     */
    void onWire(Runnable task) {
        if (wire == null) {
            task.run();
            return;
        }
        wire.carry(task);
    }

    /** The wire between QPs of this JVM, which CQs with such QPs progress; null with {@code wire=sync}. */
    SoftWire wire() {
        return wire;
    }

    boolean asyncWire() {
        return wire != null;
    }

    List<SoftCmId> cmIds() {
        return live(SoftCmId.class);
    }

    List<SoftEventChannel> eventChannels() {
        return live(SoftEventChannel.class);
    }

    private <T extends SoftResource> List<T> live(Class<T> kind) {
        List<T> found = new ArrayList<>();
        for (SoftResource r : live) {
            if (kind.isInstance(r)) {
                found.add(kind.cast(r));
            }
        }
        return found;
    }

    List<SoftDevice> softDevices() {
        return devices;
    }

    void removeDevice(SoftDevice device) {
        devices.remove(device);
    }

    /** The port that owns an IPv4 address of this fabric, or null. */
    SoftPort portFor(InetAddress address) {
        for (SoftDevice d : devices) {
            for (SoftPort p : d.ports) {
                if (p.address.equals(address)) {
                    return p;
                }
            }
        }
        return null;
    }

    /** The port whose GID this is, or null. */
    SoftPort portFor(byte[] gid) {
        for (SoftDevice d : devices) {
            for (SoftPort p : d.ports) {
                if (Arrays.equals(p.gid, gid)) {
                    return p;
                }
            }
        }
        return null;
    }

    Set<SoftQueuePair> multicastMembers(byte[] mgid) {
        return multicastGroups.getOrDefault(ByteBuffer.wrap(mgid), Set.of());
    }

    void attachMulticast(byte[] mgid, SoftQueuePair qp) {
        multicastGroups.computeIfAbsent(ByteBuffer.wrap(mgid.clone()), k -> ConcurrentHashMap.newKeySet()).add(qp);
    }

    void detachMulticast(byte[] mgid, SoftQueuePair qp) {
        multicastGroups.computeIfPresent(ByteBuffer.wrap(mgid), (k, members) -> {
            members.remove(qp);
            return members.isEmpty() ? null : members;
        });
    }

    /** Closes every resource still open, dependants first, then stops the fabric's threads. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        if (wire != null) {
            // the wire stops before the resources go, as a device's engines do: what it did not carry is flushed
            wire.stop();
        }
        List<SoftResource> open = new ArrayList<>(live);
        open.sort(Comparator.comparingInt(SoftFabric::teardownRank));
        for (SoftResource r : open) {
            r.forceClose();
        }
        closed = true;
        links.close();
        timer.shutdownNow();
        try {
            timer.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (SoftDevice d : devices) {
            d.asyncQueue.close();
        }
    }

    /** The destroy order rdma-core requires: CM id, QP, CQ, channel, MR, PD (ARCHITECTURE.md). */
    private static int teardownRank(SoftResource r) {
        if (r instanceof SoftCmId) {
            return 0;
        }
        if (r instanceof SoftQueuePair) {
            return 1;
        }
        if (r instanceof SoftSharedReceiveQueue || r instanceof SoftAddressHandle) {
            return 2;
        }
        if (r instanceof SoftCompletionQueue) {
            return 3;
        }
        if (r instanceof SoftCompletionChannel) {
            return 4;
        }
        if (r instanceof SoftMemoryRegion) {
            return 5;
        }
        if (r instanceof SoftProtectionDomain) {
            return 6;
        }
        return 7;
    }
}
