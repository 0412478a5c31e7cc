package io.rdmaactors.cm;

/** The values of {@code enum rdma_cm_event_type} (rdma_cma.h), with their native codes. */
public enum CmEventType {
    ADDR_RESOLVED(0),
    ADDR_ERROR(1),
    ROUTE_RESOLVED(2),
    ROUTE_ERROR(3),
    CONNECT_REQUEST(4),
    CONNECT_RESPONSE(5),
    CONNECT_ERROR(6),
    UNREACHABLE(7),
    REJECTED(8),
    ESTABLISHED(9),
    DISCONNECTED(10),
    DEVICE_REMOVAL(11),
    MULTICAST_JOIN(12),
    MULTICAST_ERROR(13),
    ADDR_CHANGE(14),
    TIMEWAIT_EXIT(15);

    private static final CmEventType[] BY_CODE = values();

    private final int code;

    CmEventType(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    /** The type for a native code, or null when librdmacm sent one this library does not know. */
    public static CmEventType fromCode(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }
}
