package io.rdmaactors.verbs;

/** Queue pair states ({@code enum ibv_qp_state}). */
public enum QpState {
    RESET(0),
    INIT(1),
    RTR(2),
    RTS(3),
    SQD(4),
    SQE(5),
    ERR(6);

    private final int code;

    QpState(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    public static QpState fromCode(int code) {
        for (QpState s : values()) {
            if (s.code == code) {
                return s;
            }
        }
        throw new IllegalArgumentException("unknown QP state " + code);
    }
}
