package io.rdmaactors.verbs;

/** Transport types ({@code enum ibv_qp_type}): reliable connected, unreliable datagram. */
public enum QpType {
    RC(2),
    UD(4);

    private final int code;

    QpType(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }
}
