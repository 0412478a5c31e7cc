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
                              UdDestination destination) {

    /** Where a UD send goes: an address handle, the remote QP number and its Q_Key. */
    public record UdDestination(AddressHandle addressHandle, int remoteQpn, int remoteQkey) {
    }

    /** What every factory's request carries: shared, as an immutable set may be. */
    private static final Set<SendFlag> SIGNALED = Set.of(SendFlag.SIGNALED);

    public SendWorkRequest {
        sgList = List.copyOf(sgList);
        flags = flags.isEmpty() ? Set.of() : Set.copyOf(flags);
    }

    public static SendWorkRequest send(long wrId, ScatterGatherElement... sge) {
        return new SendWorkRequest(wrId, SendOpcode.SEND, List.of(sge), SIGNALED, 0, 0, 0, 0, 0, null);
    }

    public static SendWorkRequest sendWithImmediate(long wrId, int immData, ScatterGatherElement... sge) {
        return new SendWorkRequest(wrId, SendOpcode.SEND_WITH_IMM, List.of(sge), SIGNALED, immData,
                0, 0, 0, 0, null);
    }

    public static SendWorkRequest write(long wrId, long remoteAddress, int rkey, ScatterGatherElement... sge) {
        return new SendWorkRequest(wrId, SendOpcode.RDMA_WRITE, List.of(sge), SIGNALED, 0,
                remoteAddress, rkey, 0, 0, null);
    }

    public static SendWorkRequest writeWithImmediate(long wrId, int immData, long remoteAddress, int rkey,
                                                     ScatterGatherElement... sge) {
        return new SendWorkRequest(wrId, SendOpcode.RDMA_WRITE_WITH_IMM, List.of(sge), SIGNALED,
                immData, remoteAddress, rkey, 0, 0, null);
    }

    public static SendWorkRequest read(long wrId, long remoteAddress, int rkey, ScatterGatherElement... sge) {
        return new SendWorkRequest(wrId, SendOpcode.RDMA_READ, List.of(sge), SIGNALED, 0,
                remoteAddress, rkey, 0, 0, null);
    }

    /** Adds {@code add} to the 8 bytes at the remote address; the old value lands in {@code result}. */
    public static SendWorkRequest fetchAdd(long wrId, long remoteAddress, int rkey, long add,
                                           ScatterGatherElement result) {
        return new SendWorkRequest(wrId, SendOpcode.ATOMIC_FETCH_AND_ADD, List.of(result), SIGNALED,
                0, remoteAddress, rkey, add, 0, null);
    }

    /** Swaps in {@code swap} if the 8 bytes at the remote address equal {@code compare}. */
    public static SendWorkRequest compareSwap(long wrId, long remoteAddress, int rkey, long compare, long swap,
                                              ScatterGatherElement result) {
        return new SendWorkRequest(wrId, SendOpcode.ATOMIC_CMP_AND_SWP, List.of(result), SIGNALED,
                0, remoteAddress, rkey, compare, swap, null);
    }

    /** The same request with these flags instead of the current ones. */
    public SendWorkRequest withFlags(SendFlag... newFlags) {
        Set<SendFlag> set = newFlags.length == 0 ? Set.of() : EnumSet.of(newFlags[0], newFlags);
        return new SendWorkRequest(wrId, opcode, sgList, set, immData, remoteAddress, rkey, compareAdd, swap,
                destination);
    }

    /** The same request with these flags added. */
    public SendWorkRequest with(SendFlag... more) {
        EnumSet<SendFlag> set = flags.isEmpty() ? EnumSet.noneOf(SendFlag.class) : EnumSet.copyOf(flags);
        set.addAll(List.of(more));
        return new SendWorkRequest(wrId, opcode, sgList, set, immData, remoteAddress, rkey, compareAdd, swap,
                destination);
    }

    /** The same request, unsignaled: it completes silently unless it fails. */
    public SendWorkRequest unsignaled() {
        EnumSet<SendFlag> set = flags.isEmpty() ? EnumSet.noneOf(SendFlag.class) : EnumSet.copyOf(flags);
        set.remove(SendFlag.SIGNALED);
        return new SendWorkRequest(wrId, opcode, sgList, set, immData, remoteAddress, rkey, compareAdd, swap,
                destination);
    }

    /** The same request addressed to a UD destination. */
    public SendWorkRequest to(AddressHandle ah, int remoteQpn, int remoteQkey) {
        return new SendWorkRequest(wrId, opcode, sgList, flags, immData, remoteAddress, rkey, compareAdd, swap,
                new UdDestination(ah, remoteQpn, remoteQkey));
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
