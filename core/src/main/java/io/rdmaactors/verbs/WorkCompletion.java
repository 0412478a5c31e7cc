package io.rdmaactors.verbs;

/**
 * A work completion ({@code struct ibv_wc}). On an error completion only {@code wrId},
 * {@code status}, {@code vendorErr} and {@code qpNum} are valid, so route by {@code wrId}.
 *
 * @param byteLen bytes received (for UD including the 40-byte GRH), or the data length of a read
 * @param srcQp   the sending QP of a UD receive
 */
public record WorkCompletion(long wrId, WcStatus status, WcOpcode opcode, int vendorErr, int byteLen,
                             int immData, int flags, int qpNum, int srcQp) {

    /** {@code IBV_WC_GRH}: the first 40 bytes of the buffer hold a global routing header. */
    public static final int GRH = 1;
    /** {@code IBV_WC_WITH_IMM}: {@code immData} is valid. */
    public static final int WITH_IMM = 2;

    public boolean isSuccess() {
        return status == WcStatus.SUCCESS;
    }

    public boolean hasImmediate() {
        return (flags & WITH_IMM) != 0;
    }

    public boolean hasGrh() {
        return (flags & GRH) != 0;
    }

    /** An error completion: the fields the verbs leave undefined are zero. */
    public static WorkCompletion error(long wrId, WcStatus status, int qpNum) {
        return new WorkCompletion(wrId, status, null, 0, 0, 0, 0, qpNum, 0);
    }
}
