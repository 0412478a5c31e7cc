package io.rdmaactors.soft;

import io.rdmaactors.verbs.Access;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.ResourceBusyException;
import io.rdmaactors.verbs.ResourceKind;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Registered memory. Its address is a virtual address the device hands out (as a real MR's is the
 * process's), so a peer can only name it by that address and the rkey.
 */
final class SoftMemoryRegion extends SoftResource implements MemoryRegion {

    final SoftProtectionDomain pd;
    private final ByteBuffer memory;
    private final long address;
    private final int key;
    private final Set<Access> access;
    /** Memory windows bound to the region: it cannot be deregistered while any is. */
    final AtomicInteger windows = new AtomicInteger();

    SoftMemoryRegion(SoftProtectionDomain pd, ByteBuffer buffer, Set<Access> access) {
        super(pd.fabric, ResourceKind.MEMORY_REGION);
        this.pd = pd;
        // atomics work on host-order 64-bit words, as rxe does
        this.memory = buffer.slice().order(ByteOrder.nativeOrder());
        this.access = access.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(access));
        this.address = pd.device.allocateAddress(memory.capacity());
        this.key = pd.device.register(this);
        pd.dependants.incrementAndGet();
    }

    @Override
    public long address() {
        return address;
    }

    @Override
    public int length() {
        return memory.capacity();
    }

    @Override
    public int lkey() {
        return key;
    }

    @Override
    public int rkey() {
        return key;
    }

    @Override
    public Set<Access> access() {
        return access;
    }

    @Override
    public ByteBuffer buffer() {
        return memory.duplicate();
    }

    /** True when [addr, addr+len) lies inside the region. */
    boolean covers(long addr, long len) {
        // compares offsets, not ends: addr + len wraps past Long.MAX_VALUE
        return len >= 0 && addr >= address && len <= memory.capacity() && addr - address <= memory.capacity() - len;
    }

    /** The bytes [addr, addr+len) where they lie, for a payload read when it is sent. */
    ByteBuffer view(long addr, int len) {
        return memory.slice((int) (addr - address), len);
    }

    void read(long addr, byte[] dst, int off, int len) {
        memory.get((int) (addr - address), dst, off, len);
    }

    void write(long addr, ByteBuffer src, int srcIndex, int len) {
        memory.put((int) (addr - address), src, srcIndex, len);
    }

    long getLong(long addr) {
        return memory.getLong((int) (addr - address));
    }

    void putLong(long addr, long value) {
        memory.putLong((int) (addr - address), value);
    }

    @Override
    void checkDestroyable() {
        int n = windows.get();
        if (n > 0) {
            throw new ResourceBusyException("ibv_dereg_mr", n + " memory windows are bound to the region");
        }
    }

    @Override
    void destroy() {
        pd.device.deregister(key);
        pd.forget(this);
        pd.dependants.decrementAndGet();
    }
}
