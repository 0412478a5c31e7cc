package io.rdmaactors.verbs;

/** Send work request flags ({@code enum ibv_send_flags}). */
public enum SendFlag {
    FENCE(1),
    SIGNALED(2),
    SOLICITED(4),
    INLINE(8);

    private final int bit;

    SendFlag(int bit) {
        this.bit = bit;
    }

    public int bit() {
        return bit;
    }
}
