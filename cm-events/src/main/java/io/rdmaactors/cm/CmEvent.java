package io.rdmaactors.cm;

/**
 * A communication manager event ({@code struct rdma_cm_event}), copied out of native memory so that
 * it outlives the ack that frees the original. {@link #id()} is the handle of the CM id the event
 * concerns; for {@link ConnectRequest} it is the new id and {@link ConnectRequest#listenId()} the
 * listener. {@code status} is what librdmacm reports: a negative errno for the error events, the
 * CM reject reason for {@link Rejected}.
 */
public sealed interface CmEvent {

    long id();

    CmEventType type();

    default int status() {
        return 0;
    }

    record AddrResolved(long id) implements CmEvent {
        public CmEventType type() { return CmEventType.ADDR_RESOLVED; }
    }

    record AddrError(long id, int status) implements CmEvent {
        public CmEventType type() { return CmEventType.ADDR_ERROR; }
    }

    record RouteResolved(long id) implements CmEvent {
        public CmEventType type() { return CmEventType.ROUTE_RESOLVED; }
    }

    record RouteError(long id, int status) implements CmEvent {
        public CmEventType type() { return CmEventType.ROUTE_ERROR; }
    }

    /** A peer asks to connect; {@code ud} is set for a UD (SIDR) request. */
    record ConnectRequest(long id, long listenId, byte[] privateData, UdParameters ud) implements CmEvent {
        public CmEventType type() { return CmEventType.CONNECT_REQUEST; }
    }

    /** The passive side accepted, delivered only to an active id with no QP of its own. */
    record ConnectResponse(long id, byte[] privateData) implements CmEvent {
        public CmEventType type() { return CmEventType.CONNECT_RESPONSE; }
    }

    record ConnectError(long id, int status) implements CmEvent {
        public CmEventType type() { return CmEventType.CONNECT_ERROR; }
    }

    /** The peer never answered: the CM gave up after its retries. */
    record Unreachable(long id, int status) implements CmEvent {
        public CmEventType type() { return CmEventType.UNREACHABLE; }
    }

    /** The peer or its CM refused: status 28 is a consumer reject (with private data), 8 no listener. */
    record Rejected(long id, int status, byte[] privateData) implements CmEvent {
        public static final int CONSUMER_DEFINED = 28;
        public static final int INVALID_SERVICE_ID = 8;

        public CmEventType type() { return CmEventType.REJECTED; }
    }

    /** The connection is up; {@code ud} is set when a UD (SIDR) exchange resolved a remote QP. */
    record Established(long id, byte[] privateData, UdParameters ud) implements CmEvent {
        public CmEventType type() { return CmEventType.ESTABLISHED; }
    }

    record Disconnected(long id) implements CmEvent {
        public CmEventType type() { return CmEventType.DISCONNECTED; }
    }

    /** The device under the id went away: its owner must destroy the id. */
    record DeviceRemoval(long id) implements CmEvent {
        public CmEventType type() { return CmEventType.DEVICE_REMOVAL; }
    }

    record MulticastJoin(long id, UdParameters ud) implements CmEvent {
        public CmEventType type() { return CmEventType.MULTICAST_JOIN; }
    }

    record MulticastError(long id, int status) implements CmEvent {
        public CmEventType type() { return CmEventType.MULTICAST_ERROR; }
    }

    record AddrChange(long id) implements CmEvent {
        public CmEventType type() { return CmEventType.ADDR_CHANGE; }
    }

    /** The QP of a closed connection left timewait and its number may be reused. */
    record TimewaitExit(long id) implements CmEvent {
        public CmEventType type() { return CmEventType.TIMEWAIT_EXIT; }
    }

    /** A native event type this library does not know; {@link #type()} is null. */
    record Unknown(long id, int code, int status) implements CmEvent {
        public CmEventType type() { return null; }
    }

    /** The event channel itself failed; the pump that read it stops after delivering this. */
    record ChannelFailed(Throwable cause) implements CmEvent {
        public long id() { return 0; }

        public CmEventType type() { return null; }
    }

    /** The native code of an event, or -1 for {@link ChannelFailed}. */
    static int nativeCode(CmEvent event) {
        if (event instanceof Unknown u) {
            return u.code();
        }
        return event.type() == null ? -1 : event.type().code();
    }

    /** Builds the typed event for a native code; an unknown code becomes {@link Unknown}. */
    static CmEvent fromNative(int code, long id, long listenId, int status, byte[] privateData, UdParameters ud) {
        CmEventType type = CmEventType.fromCode(code);
        if (type == null) {
            return new Unknown(id, code, status);
        }
        byte[] data = privateData == null ? new byte[0] : privateData;
        switch (type) {
            case ADDR_RESOLVED: return new AddrResolved(id);
            case ADDR_ERROR: return new AddrError(id, status);
            case ROUTE_RESOLVED: return new RouteResolved(id);
            case ROUTE_ERROR: return new RouteError(id, status);
            case CONNECT_REQUEST: return new ConnectRequest(id, listenId, data, ud);
            case CONNECT_RESPONSE: return new ConnectResponse(id, data);
            case CONNECT_ERROR: return new ConnectError(id, status);
            case UNREACHABLE: return new Unreachable(id, status);
            case REJECTED: return new Rejected(id, status, data);
            case ESTABLISHED: return new Established(id, data, ud);
            case DISCONNECTED: return new Disconnected(id);
            case DEVICE_REMOVAL: return new DeviceRemoval(id);
            case MULTICAST_JOIN: return new MulticastJoin(id, ud);
            case MULTICAST_ERROR: return new MulticastError(id, status);
            case ADDR_CHANGE: return new AddrChange(id);
            case TIMEWAIT_EXIT: return new TimewaitExit(id);
            default: throw new AssertionError(type);
        }
    }
}
