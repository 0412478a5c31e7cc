package io.rdmaactors.verbs;

import java.util.Set;

/** Memory and QP access rights ({@code enum ibv_access_flags}). */
public enum Access {
    LOCAL_WRITE(1),
    REMOTE_WRITE(2),
    REMOTE_READ(4),
    REMOTE_ATOMIC(8),
    /** The region may have memory windows bound to it ({@code IBV_ACCESS_MW_BIND}). */
    MW_BIND(16);

    private final int bit;

    Access(int bit) {
        this.bit = bit;
    }

    public int bit() {
        return bit;
    }

    /** The rights a peer may be granted: what a memory window's bind may give. */
    public boolean isRemote() {
        return this == REMOTE_WRITE || this == REMOTE_READ || this == REMOTE_ATOMIC;
    }

    public static int mask(Set<Access> access) {
        int mask = 0;
        for (Access a : access) {
            mask |= a.bit;
        }
        return mask;
    }
}
