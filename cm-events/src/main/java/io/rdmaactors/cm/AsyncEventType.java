package io.rdmaactors.cm;

/** The values of {@code enum ibv_event_type} (verbs.h), with their native codes. */
public enum AsyncEventType {
    CQ_ERR(0),
    QP_FATAL(1),
    QP_REQ_ERR(2),
    QP_ACCESS_ERR(3),
    COMM_EST(4),
    SQ_DRAINED(5),
    PATH_MIG(6),
    PATH_MIG_ERR(7),
    DEVICE_FATAL(8),
    PORT_ACTIVE(9),
    PORT_ERR(10),
    LID_CHANGE(11),
    PKEY_CHANGE(12),
    SM_CHANGE(13),
    SRQ_ERR(14),
    SRQ_LIMIT_REACHED(15),
    QP_LAST_WQE_REACHED(16),
    CLIENT_REREGISTER(17),
    GID_CHANGE(18),
    WQ_FATAL(19);

    private static final AsyncEventType[] BY_CODE = values();

    private final int code;

    AsyncEventType(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    /** The type for a native code, or null for a code this library does not know. */
    public static AsyncEventType fromCode(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }

    /** What the event's element union names: verbs.h documents which member is valid per type. */
    public Affects affects() {
        switch (this) {
            case CQ_ERR:
                return Affects.CQ;
            case SRQ_ERR:
            case SRQ_LIMIT_REACHED:
                return Affects.SRQ;
            case DEVICE_FATAL:
                return Affects.DEVICE;
            case PORT_ACTIVE:
            case PORT_ERR:
            case LID_CHANGE:
            case PKEY_CHANGE:
            case SM_CHANGE:
            case CLIENT_REREGISTER:
            case GID_CHANGE:
                return Affects.PORT;
            case WQ_FATAL:
                return Affects.WQ;
            default:
                return Affects.QP;
        }
    }

    /** The kind of resource an async event concerns. */
    public enum Affects { QP, CQ, SRQ, PORT, DEVICE, WQ }
}
