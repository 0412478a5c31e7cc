package io.rdmaactors.soft;

import io.rdmaactors.cm.AddressVector;
import io.rdmaactors.verbs.Access;
import io.rdmaactors.verbs.AddressHandle;
import io.rdmaactors.verbs.Device;
import io.rdmaactors.verbs.InvalidRequestException;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.MemoryWindow;
import io.rdmaactors.verbs.ProtectionDomain;
import io.rdmaactors.verbs.QpInitAttributes;
import io.rdmaactors.verbs.QueuePair;
import io.rdmaactors.verbs.ResourceBusyException;
import io.rdmaactors.verbs.ResourceKind;
import io.rdmaactors.verbs.ScatterGatherElement;
import io.rdmaactors.verbs.SharedReceiveQueue;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A soft protection domain. Local memory is reached through it, as rxe_mr.c's copy_data does: an
 * SGE's lkey must name a live region of the QP's PD that covers the SGE.
 */
final class SoftProtectionDomain extends SoftResource implements ProtectionDomain {

    final SoftDevice device;
    /** MRs, MWs, QPs, SRQs and AHs created in this PD and not yet destroyed. */
    final AtomicInteger dependants = new AtomicInteger();
    /**
     * The regions gathers and scatters found lately, by the low bits of their key: the next one with
     * the same lkey skips the device's map and its boxed key. A PD that several connections share
     * (the actors' one per device) alternates between their send slots, so one remembered region
     * would miss on every message. Read and written without a lock: an entry is a region or null
     * (its key and bounds are final) and is checked like any other, so a stale one (deregistered
     * since) is refused all the same.
     */
    private final SoftMemoryRegion[] recent = new SoftMemoryRegion[RECENT_MASK + 1];
    /** The key bits that index {@link #recent}: the device counts them up ({@link SoftDevice#register}). */
    static final int RECENT_MASK = 63;

    SoftProtectionDomain(SoftDevice device) {
        super(device.fabric, ResourceKind.PROTECTION_DOMAIN);
        this.device = device;
    }

    @Override
    public Device device() {
        return device;
    }

    @Override
    public MemoryRegion register(ByteBuffer buffer, Set<Access> access) {
        checkUsable("ibv_reg_mr");
        if (buffer == null || !buffer.isDirect()) {
            throw new InvalidRequestException("ibv_reg_mr", "only direct buffers can be registered");
        }
        if (buffer.remaining() == 0) {
            throw new InvalidRequestException("ibv_reg_mr", "the buffer has no bytes between position and limit");
        }
        if ((access.contains(Access.REMOTE_WRITE) || access.contains(Access.REMOTE_ATOMIC))
                && !access.contains(Access.LOCAL_WRITE)) {
            throw new InvalidRequestException("ibv_reg_mr", "REMOTE_WRITE and REMOTE_ATOMIC need LOCAL_WRITE");
        }
        return new SoftMemoryRegion(this, buffer, access);
    }

    @Override
    public MemoryWindow allocateMemoryWindow() {
        checkUsable("ibv_alloc_mw");
        return new SoftMemoryWindow(this);
    }

    @Override
    public QueuePair createQueuePair(QpInitAttributes attributes) {
        checkUsable("ibv_create_qp");
        return new SoftQueuePair(this, attributes);
    }

    @Override
    public SharedReceiveQueue createSharedReceiveQueue(int maxWr, int maxSge) {
        checkUsable("ibv_create_srq");
        if (maxWr < 1 || maxWr > SoftDevice.MAX_WR || maxSge < 1 || maxSge > SoftDevice.MAX_SGE) {
            throw new InvalidRequestException("ibv_create_srq", "max_wr " + maxWr + " or max_sge " + maxSge
                    + " out of the device's range");
        }
        return new SoftSharedReceiveQueue(this, maxWr, maxSge);
    }

    @Override
    public AddressHandle createAddressHandle(AddressVector addressVector) {
        checkUsable("ibv_create_ah");
        device.port(addressVector.portNum(), "ibv_create_ah");
        return new SoftAddressHandle(this, addressVector);
    }

    /**
     * The bytes the SGEs name; null when one is not in registered memory of this PD. One SGE is
     * read where it lies when the packet goes out, as an HCA reads it by DMA (the poster may not
     * touch it before the completion); inline data, and several SGEs, are copied now.
     */
    ByteBuffer gather(List<ScatterGatherElement> sgl, boolean copy) {
        if (!copy && sgl.size() == 1) {
            ScatterGatherElement sge = sgl.get(0);
            SoftMemoryRegion mr = localRegion(sge, false);
            return mr == null ? null : mr.view(sge.address(), sge.length());
        }
        long total = 0;
        for (ScatterGatherElement sge : sgl) {
            total += sge.length();
        }
        if (total > Integer.MAX_VALUE) {
            return null;
        }
        byte[] data = new byte[(int) total];
        int off = 0;
        for (ScatterGatherElement sge : sgl) {
            SoftMemoryRegion mr = localRegion(sge, false);
            if (mr == null) {
                return null;
            }
            mr.read(sge.address(), data, off, sge.length());
            off += sge.length();
        }
        return ByteBuffer.wrap(data);
    }

    /** Writes data across the SGEs; false when one is not writable registered memory of this PD. */
    boolean scatter(List<ScatterGatherElement> sgl, ByteBuffer data) {
        return scatter(sgl, data, 0);
    }

    /** Scatters {@code data} into the SGEs from byte {@code skip} of them on (a later segment of a READ's response). */
    boolean scatter(List<ScatterGatherElement> sgl, ByteBuffer data, long skip) {
        int off = data.position();
        for (ScatterGatherElement sge : sgl) {
            if (off >= data.limit()) {
                break;
            }
            if (skip >= sge.length()) {
                skip -= sge.length();
                continue;
            }
            SoftMemoryRegion mr = localRegion(sge, true);
            if (mr == null) {
                return false;
            }
            int n = (int) Math.min(sge.length() - skip, data.limit() - off);
            mr.write(sge.address() + skip, data, off, n);
            off += n;
            skip = 0;
        }
        return true;
    }

    /** The region an SGE's lkey names, if it is this PD's, covers the SGE and, to be written, grants LOCAL_WRITE. */
    private SoftMemoryRegion localRegion(ScatterGatherElement sge, boolean write) {
        int slot = sge.lkey() & (recent.length - 1);
        SoftMemoryRegion mr = recent[slot];
        if (mr == null || mr.lkey() != sge.lkey() || mr.isClosed()) {
            mr = device.memoryRegion(sge.lkey());
            recent[slot] = mr;
        }
        if (mr == null || mr.pd != this || mr.isClosed() || !mr.covers(sge.address(), sge.length())
                || (write && !mr.access().contains(Access.LOCAL_WRITE))) {
            return null;
        }
        return mr;
    }

    /** A region deregistered: the lookups' memory of it goes, so it holds no buffer alive. */
    void forget(SoftMemoryRegion mr) {
        int slot = mr.lkey() & (recent.length - 1);
        if (recent[slot] == mr) {
            recent[slot] = null;
        }
    }

    void checkUsable(String call) {
        checkOpen(call);
        device.checkAlive(call);
    }

    @Override
    void checkDestroyable() {
        int n = dependants.get();
        if (n > 0) {
            throw new ResourceBusyException("ibv_dealloc_pd", n + " resources still use the protection domain");
        }
    }

    @Override
    void destroy() {
    }
}
