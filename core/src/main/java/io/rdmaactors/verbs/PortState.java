package io.rdmaactors.verbs;

/** Logical port states ({@code enum ibv_port_state}). */
public enum PortState {
    NOP(0),
    DOWN(1),
    INIT(2),
    ARMED(3),
    ACTIVE(4),
    ACTIVE_DEFER(5);

    private final int code;

    PortState(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    public static PortState fromCode(int code) {
        for (PortState s : values()) {
            if (s.code == code) {
                return s;
            }
        }
        return NOP;
    }
}
