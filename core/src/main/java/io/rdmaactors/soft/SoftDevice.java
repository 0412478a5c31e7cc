package io.rdmaactors.soft;

import io.rdmaactors.cm.AsyncEvent;
import io.rdmaactors.cm.EventSource;
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
import java.security.SecureRandom;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/** A soft device: two ports, QP numbers, memory keys and an async event queue. */
final class SoftDevice implements Device {

    static final int MAX_WR = 16384;
    static final int MAX_SGE = 32;
    static final int MAX_CQE = 1 << 20;
    static final int MTU = 4096;

    final SoftFabric fabric;
    final int index;
    final SoftPort[] ports;
    final EventQueue<AsyncEvent> asyncQueue = new EventQueue<>();
    private final Map<Integer, SoftQueuePair> qps = new ConcurrentHashMap<>();
    private final Map<Integer, SoftMemoryRegion> keys = new ConcurrentHashMap<>();
    /** Memory windows by index (a window's key without its low byte, which each bind changes). */
    private final Map<Integer, SoftMemoryWindow> windows = new ConcurrentHashMap<>();
    private final AtomicInteger nextQpn = new AtomicInteger(0x11);
    /** Keys and addresses a peer must not guess: it may touch only what it was told of. */
    private final SecureRandom random = new SecureRandom();
    /** Regions registered so far (under {@code windows}): the low bits of the next key. */
    private int registrations;
    private final AtomicLong nextAddress;
    /** Serialises atomics that target this device's memory, as the HCA does. */
    final Object atomicLock = new Object();
    private volatile boolean alive = true;

    SoftDevice(SoftFabric fabric, int index) {
        this.fabric = fabric;
        this.index = index;
        this.ports = new SoftPort[] {new SoftPort(this, 1), new SoftPort(this, 2)};
        // regions start at a random page of a 2^44-byte range, as address space layout randomisation places them
        this.nextAddress = new AtomicLong(0x100000000000L + ((random.nextLong() >>> 32) << 12));
    }

    @Override
    public String name() {
        return "soft" + index;
    }

    @Override
    public DeviceAttributes query() {
        checkAlive("ibv_query_device");
        return new DeviceAttributes(name(), "1.0", 0x5eed000000000000L | index, 0x5eed, 1, ports.length,
                1 << 16, MAX_WR, MAX_SGE, 1 << 16, MAX_CQE, 1 << 20, Integer.MAX_VALUE, 1 << 16, 16, 1 << 12,
                MAX_WR, MAX_SGE, 1 << 10, 1 << 10, true, true);
    }

    @Override
    public PortAttributes queryPort(int portNum) {
        checkAlive("ibv_query_port");
        SoftPort port = port(portNum, "ibv_query_port");
        return new PortAttributes(portNum, port.cut ? PortState.DOWN : PortState.ACTIVE, Mtu.MTU_4096, Mtu.MTU_4096,
                port.lid(), LinkLayer.INFINIBAND, List.of(port.gid));
    }

    SoftPort port(int portNum, String call) {
        if (portNum < 1 || portNum > ports.length) {
            throw new InvalidRequestException(call, name() + " has no port " + portNum);
        }
        return ports[portNum - 1];
    }

    /** The port with this GID, or null. */
    SoftPort portFor(byte[] gid) {
        for (SoftPort p : ports) {
            if (java.util.Arrays.equals(p.gid, gid)) {
                return p;
            }
        }
        return null;
    }

    @Override
    public ProtectionDomain allocateProtectionDomain() {
        checkAlive("ibv_alloc_pd");
        return new SoftProtectionDomain(this);
    }

    @Override
    public CompletionChannel createCompletionChannel() {
        checkAlive("ibv_create_comp_channel");
        return new SoftCompletionChannel(this);
    }

    @Override
    public CompletionQueue createCompletionQueue(int cqe, CompletionChannel channel) {
        checkAlive("ibv_create_cq");
        if (cqe < 1 || cqe > MAX_CQE) {
            throw new InvalidRequestException("ibv_create_cq", "cqe must be 1.." + MAX_CQE + ", not " + cqe);
        }
        SoftCompletionChannel softChannel = null;
        if (channel != null) {
            if (!(channel instanceof SoftCompletionChannel c) || c.device != this) {
                throw new InvalidRequestException("ibv_create_cq", "the channel belongs to another device");
            }
            softChannel = c;
            softChannel.checkOpen("ibv_create_cq");
        }
        return new SoftCompletionQueue(this, cqe, softChannel);
    }

    @Override
    public EventSource<AsyncEvent> asyncEvents() {
        return asyncQueue;
    }

    @Override
    public boolean isAlive() {
        return alive && !fabric.timer.isShutdown();
    }

    void checkAlive(String call) {
        fabric.checkOpen(call);
        if (!alive) {
            throw new ResourceClosedException(call, name() + " was removed");
        }
    }

    void raise(AsyncEvent event) {
        asyncQueue.post(event);
    }

    /** Marks the device gone; the fault injector tears down what lived on it. */
    void markRemoved() {
        alive = false;
    }

    int allocateQpn(SoftQueuePair qp) {
        int qpn = nextQpn.getAndIncrement() & 0xFFFFFF;
        qps.put(qpn, qp);
        return qpn;
    }

    void releaseQpn(int qpn) {
        qps.remove(qpn);
    }

    SoftQueuePair queuePair(int qpn) {
        return qps.get(qpn);
    }

    List<SoftQueuePair> queuePairs() {
        return List.copyOf(qps.values());
    }

    /**
     * A fresh key, never 0, never one in use and never one a memory window's index claims; lkey and
     * rkey are the same value, as on most HCAs. Random but for its low bits, which count the
     * registrations (as an HCA's key holds its region's index), so that regions registered one
     * after the other take different entries of their PD's lookup ({@link SoftProtectionDomain}).
     */
    int register(SoftMemoryRegion mr) {
        synchronized (windows) {
            int low = registrations++ & SoftProtectionDomain.RECENT_MASK;
            int key;
            do {
                key = random.nextInt() & ~SoftProtectionDomain.RECENT_MASK | low;
            } while (key == 0 || windows.containsKey(key >>> 8) || keys.putIfAbsent(key, mr) != null);
            return key;
        }
    }

    void deregister(int key) {
        keys.remove(key);
    }

    SoftMemoryRegion memoryRegion(int key) {
        return keys.get(key);
    }

    /**
     * A window's first key: a fresh index (no region's key and no other window has it) and a random
     * key byte, as rxe gives an index from its pool and a key byte from a counter.
     */
    int allocate(SoftMemoryWindow mw) {
        synchronized (windows) {
            while (true) {
                int key = random.nextInt();
                int index = key >>> 8;
                if (index == 0 || windows.containsKey(index) || regionHasIndex(index)) {
                    continue;
                }
                windows.put(index, mw);
                return key;
            }
        }
    }

    private boolean regionHasIndex(int index) {
        for (int low = 0; low < 256; low++) {
            if (keys.containsKey((index << 8) | low)) {
                return true;
            }
        }
        return false;
    }

    void deallocate(int index) {
        windows.remove(index);
    }

    /** The window whose index the key names, whatever its key byte; null when none. */
    SoftMemoryWindow memoryWindow(int key) {
        return windows.get(key >>> 8);
    }

    /** A page-aligned virtual address range after a guard gap of 1 to 16 random pages, so regions never touch. */
    long allocateAddress(int length) {
        long span = ((length + 4095L) & ~4095L) + 4096L * (1 + random.nextInt(16));
        return nextAddress.getAndAdd(span);
    }
}
