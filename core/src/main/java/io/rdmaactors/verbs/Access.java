package io.rdmaactors.verbs;

import java.util.Set;

/** Memory and QP access rights ({@code enum ibv_access_flags}). */
public enum Access {
    LOCAL_WRITE(1),
    REMOTE_WRITE(2),
    REMOTE_READ(4),
    REMOTE_ATOMIC(8);

    private final int bit;

    Access(int bit) {
        this.bit = bit;
    }

    public int bit() {
        return bit;
    }

    public static int mask(Set<Access> access) {
        int mask = 0;
        for (Access a : access) {
            mask |= a.bit;
        }
        return mask;
    }
}
