package io.rdmaactors.verbs;

/** Automatic path migration states ({@code enum ibv_mig_state}). */
public enum MigrationState {
    MIGRATED(0),
    REARM(1),
    ARMED(2);

    private final int code;

    MigrationState(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }
}
