package io.rdmaactors.cm;

/**
 * An affiliated or unaffiliated asynchronous event ({@code struct ibv_async_event}), grouped by the
 * kind of resource it concerns. Resources are named by the handles their providers give them
 * (a QP by its number).
 */
public sealed interface AsyncEvent {

    /** The type, or null for {@link Unknown}. */
    AsyncEventType type();

    record QpEvent(AsyncEventType type, int qpNum) implements AsyncEvent {
    }

    record CqEvent(AsyncEventType type, long cq) implements AsyncEvent {
    }

    record SrqEvent(AsyncEventType type, long srq) implements AsyncEvent {
    }

    record PortEvent(AsyncEventType type, int portNum) implements AsyncEvent {
    }

    record DeviceEvent(AsyncEventType type) implements AsyncEvent {
    }

    record Unknown(int code, long element) implements AsyncEvent {
        public AsyncEventType type() { return null; }
    }

    /** The device's async event source failed; the pump that read it stops after delivering this. */
    record SourceFailed(Throwable cause) implements AsyncEvent {
        public AsyncEventType type() { return null; }
    }

    /** Builds the typed event for a native code and the element union's value. */
    static AsyncEvent fromNative(int code, long element) {
        AsyncEventType type = AsyncEventType.fromCode(code);
        if (type == null) {
            return new Unknown(code, element);
        }
        switch (type.affects()) {
            case QP: return new QpEvent(type, (int) element);
            case CQ: return new CqEvent(type, element);
            case SRQ: return new SrqEvent(type, element);
            case PORT: return new PortEvent(type, (int) element);
            case DEVICE: return new DeviceEvent(type);
            default: return new Unknown(code, element);
        }
    }

    /** The native code of an event, or -1 for {@link SourceFailed}. */
    static int nativeCode(AsyncEvent event) {
        if (event instanceof Unknown u) {
            return u.code();
        }
        return event.type() == null ? -1 : event.type().code();
    }
}
