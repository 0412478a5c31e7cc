package io.rdmaactors.verbs;

import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * A send queue work request ({@code struct ibv_send_wr}). Build one with the factory for its
 * operation and add flags with {@link #with}. Remote operations name the peer's memory by address
 * and rkey; UD sends name their destination with {@link #to}.
 */
public record SendWorkRequest(long wrId, SendOpcode opcode, List<ScatterGatherElement> sgList, Set<SendFlag> flags,
                              int immData, long remoteAddress, int rkey, long compareAdd, long swap,
                              UdDestination destination, WindowBind bind) {

    /** Where a UD send goes: an address handle, the remote QP number and its Q_Key. */
    public record UdDestination(AddressHandle addressHandle, int remoteQpn, int remoteQkey) {
    }

    /**
     * What a {@link SendOpcode#BIND_MW} binds: {@code length} bytes of {@code region} from
     * {@code address}, for the remote rights in {@code access}, under the key {@code rkey}.
     */
    public record WindowBind(MemoryWindow window, int rkey, MemoryRegion region, long address, long length,
                             Set<Access> access) {
        public WindowBind {
            access = access.isEmpty() ? Set.of() : Set.copyOf(access);
        }
    }

    /** What every factory's request carries: shared, as an immutable set may be. */
    private static final Set<SendFlag> SIGNALED = Set.of(SendFlag.SIGNALED);

    public SendWorkRequest {
        sgList = List.copyOf(sgList);
        flags = flags.isEmpty() ? Set.of() : Set.copyOf(flags);
    }

    public static SendWorkRequest send(long wrId, ScatterGatherElement... sge) {
        return new SendWorkRequest(wrId, SendOpcode.SEND, List.of(sge), SIGNALED, 0, 0, 0, 0, 0, null, null);
    }

    public static SendWorkRequest sendWithImmediate(long wrId, int immData, ScatterGatherElement... sge) {
        return new SendWorkRequest(wrId, SendOpcode.SEND_WITH_IMM, List.of(sge), SIGNALED, immData,
                0, 0, 0, 0, null, null);
    }

    public static SendWorkRequest write(long wrId, long remoteAddress, int rkey, ScatterGatherElement... sge) {
        return new SendWorkRequest(wrId, SendOpcode.RDMA_WRITE, List.of(sge), SIGNALED, 0,
                remoteAddress, rkey, 0, 0, null, null);
    }

    public static SendWorkRequest writeWithImmediate(long wrId, int immData, long remoteAddress, int rkey,
                                                     ScatterGatherElement... sge) {
        return new SendWorkRequest(wrId, SendOpcode.RDMA_WRITE_WITH_IMM, List.of(sge), SIGNALED,
                immData, remoteAddress, rkey, 0, 0, null, null);
    }

    public static SendWorkRequest read(long wrId, long remoteAddress, int rkey, ScatterGatherElement... sge) {
        return new SendWorkRequest(wrId, SendOpcode.RDMA_READ, List.of(sge), SIGNALED, 0,
                remoteAddress, rkey, 0, 0, null, null);
    }

    /** Adds {@code add} to the 8 bytes at the remote address; the old value lands in {@code result}. */
    public static SendWorkRequest fetchAdd(long wrId, long remoteAddress, int rkey, long add,
                                           ScatterGatherElement result) {
        return new SendWorkRequest(wrId, SendOpcode.ATOMIC_FETCH_AND_ADD, List.of(result), SIGNALED,
                0, remoteAddress, rkey, add, 0, null, null);
    }

    /** Swaps in {@code swap} if the 8 bytes at the remote address equal {@code compare}. */
    public static SendWorkRequest compareSwap(long wrId, long remoteAddress, int rkey, long compare, long swap,
                                              ScatterGatherElement result) {
        return new SendWorkRequest(wrId, SendOpcode.ATOMIC_CMP_AND_SWP, List.of(result), SIGNALED,
                0, remoteAddress, rkey, compare, swap, null, null);
    }

    /**
     * Binds {@code length} bytes of {@code region} from {@code address} to {@code window} for the
     * remote rights in {@code access}, under the window's {@link MemoryWindow#nextRkey()}, which
     * {@link MemoryWindow#rkey()} reports once the request is posted. The window must be unbound
     * (never bound, or invalidated since) and the region registered with {@link Access#MW_BIND}.
     */
    public static SendWorkRequest bind(long wrId, MemoryWindow window, MemoryRegion region, long address, long length,
                                       Set<Access> access) {
        for (Access a : access) {
            if (!a.isRemote()) {
                throw new InvalidRequestException("ibv_post_send", "a memory window grants remote rights only, not "
                        + a);
            }
        }
        return new SendWorkRequest(wrId, SendOpcode.BIND_MW, List.of(), SIGNALED, 0, 0, 0, 0, 0, null,
                new WindowBind(window, window.nextRkey(), region, address, length, access));
    }

    /** As {@link #bind(long, MemoryWindow, MemoryRegion, long, long, Set)}, over all of {@code region}. */
    public static SendWorkRequest bind(long wrId, MemoryWindow window, MemoryRegion region, Set<Access> access) {
        return bind(wrId, window, region, region.address(), region.length(), access);
    }

    /** Unbinds the memory window whose current key is {@code rkey}: its peer's accesses fail from then on. */
    public static SendWorkRequest localInvalidate(long wrId, int rkey) {
        return new SendWorkRequest(wrId, SendOpcode.LOCAL_INV, List.of(), SIGNALED, 0, 0, rkey, 0, 0, null, null);
    }

    /** The same request with these flags instead of the current ones. */
    public SendWorkRequest withFlags(SendFlag... newFlags) {
        Set<SendFlag> set = newFlags.length == 0 ? Set.of() : EnumSet.of(newFlags[0], newFlags);
        return new SendWorkRequest(wrId, opcode, sgList, set, immData, remoteAddress, rkey, compareAdd, swap,
                destination, bind);
    }

    /** The same request with these flags added. */
    public SendWorkRequest with(SendFlag... more) {
        EnumSet<SendFlag> set = flags.isEmpty() ? EnumSet.noneOf(SendFlag.class) : EnumSet.copyOf(flags);
        set.addAll(List.of(more));
        return new SendWorkRequest(wrId, opcode, sgList, set, immData, remoteAddress, rkey, compareAdd, swap,
                destination, bind);
    }

    /** The same request, unsignaled: it completes silently unless it fails. */
    public SendWorkRequest unsignaled() {
        EnumSet<SendFlag> set = flags.isEmpty() ? EnumSet.noneOf(SendFlag.class) : EnumSet.copyOf(flags);
        set.remove(SendFlag.SIGNALED);
        return new SendWorkRequest(wrId, opcode, sgList, set, immData, remoteAddress, rkey, compareAdd, swap,
                destination, bind);
    }

    /** The same request addressed to a UD destination. */
    public SendWorkRequest to(AddressHandle ah, int remoteQpn, int remoteQkey) {
        return new SendWorkRequest(wrId, opcode, sgList, flags, immData, remoteAddress, rkey, compareAdd, swap,
                new UdDestination(ah, remoteQpn, remoteQkey), bind);
    }

    public boolean has(SendFlag flag) {
        return flags.contains(flag);
    }

    /** The total number of bytes the SGEs name. */
    public long totalLength() {
        long total = 0;
        for (ScatterGatherElement sge : sgList) {
            total += sge.length();
        }
        return total;
    }
}
