package io.rdmaactors.jna;

import com.sun.jna.Pointer;
import io.rdmaactors.jna.binding.IbvMr;
import io.rdmaactors.verbs.Access;
import io.rdmaactors.verbs.InvalidRequestException;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.ResourceKind;
import java.nio.ByteBuffer;
import java.util.Set;

/** An {@code ibv_mr} over a direct buffer, which it keeps reachable while registered. */
final class JnaMemoryRegion extends JnaResource implements MemoryRegion {

    private final ByteBuffer buffer;
    private final long address;
    private final int lkey;
    private final int rkey;
    private final Set<Access> access;

    JnaMemoryRegion(JnaProtectionDomain pd, long mr, ByteBuffer buffer, long address, Set<Access> access) {
        super(pd.fabric, ResourceKind.MEMORY_REGION, mr);
        this.buffer = buffer;
        this.address = address;
        Pointer p = new Pointer(mr);
        this.lkey = p.getInt(IbvMr.LKEY);
        this.rkey = p.getInt(IbvMr.RKEY);
        this.access = Set.copyOf(access);
    }

    static JnaMemoryRegion of(MemoryRegion mr) {
        if (mr instanceof JnaMemoryRegion j) {
            return j;
        }
        throw new InvalidRequestException("ibv_post_send", "not a memory region of the jna fabric: " + mr);
    }

    @Override
    public long address() {
        return address;
    }

    @Override
    public int length() {
        return buffer.capacity();
    }

    @Override
    public int lkey() {
        return lkey;
    }

    @Override
    public int rkey() {
        return rkey;
    }

    @Override
    public Set<Access> access() {
        return access;
    }

    @Override
    public ByteBuffer buffer() {
        enter("ibv_mr"); // a closed region has no bytes to show
        exit();
        return buffer.duplicate().clear();
    }

    @Override
    String destroyCall() {
        return "ibv_dereg_mr";
    }

    @Override
    int destroy(boolean force) {
        return core.ibv_dereg_mr(pointer);
    }
}
