package io.rdmaactors.verbs;

/** Send queue operations ({@code enum ibv_wr_opcode}). */
public enum SendOpcode {
    RDMA_WRITE(0, WcOpcode.RDMA_WRITE),
    RDMA_WRITE_WITH_IMM(1, WcOpcode.RDMA_WRITE),
    SEND(2, WcOpcode.SEND),
    SEND_WITH_IMM(3, WcOpcode.SEND),
    RDMA_READ(4, WcOpcode.RDMA_READ),
    ATOMIC_CMP_AND_SWP(5, WcOpcode.COMP_SWAP),
    ATOMIC_FETCH_AND_ADD(6, WcOpcode.FETCH_ADD),
    /** Unbinds the type 2 memory window named by the request's rkey. */
    LOCAL_INV(7, WcOpcode.LOCAL_INV),
    /** Binds a type 2 memory window to this QP ({@link SendWorkRequest#bind}). */
    BIND_MW(8, WcOpcode.BIND_MW);

    private final int code;
    private final WcOpcode completion;

    SendOpcode(int code, WcOpcode completion) {
        this.code = code;
        this.completion = completion;
    }

    public int code() {
        return code;
    }

    /** The opcode its successful completion reports. */
    public WcOpcode completion() {
        return completion;
    }

    public boolean hasImmediate() {
        return this == RDMA_WRITE_WITH_IMM || this == SEND_WITH_IMM;
    }

    public boolean isAtomic() {
        return this == ATOMIC_CMP_AND_SWP || this == ATOMIC_FETCH_AND_ADD;
    }

    /** Operations that touch the peer's memory through an rkey. */
    public boolean isRemoteAccess() {
        return this != SEND && this != SEND_WITH_IMM && !isLocal();
    }

    /** Operations the local device runs on its own memory keys: nothing goes to the peer. */
    public boolean isLocal() {
        return this == LOCAL_INV || this == BIND_MW;
    }
}
