package io.rdmaactors.verbs;

/** Completion opcodes ({@code enum ibv_wc_opcode}); valid only on a successful completion. */
public enum WcOpcode {
    SEND(0),
    RDMA_WRITE(1),
    RDMA_READ(2),
    COMP_SWAP(3),
    FETCH_ADD(4),
    BIND_MW(5),
    LOCAL_INV(6),
    TSO(7),
    RECV(128),
    RECV_RDMA_WITH_IMM(129);

    private final int code;

    WcOpcode(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    /** The opcode for a native code, or null for one this library does not know. */
    public static WcOpcode fromCode(int code) {
        for (WcOpcode o : values()) {
            if (o.code == code) {
                return o;
            }
        }
        return null;
    }
}
