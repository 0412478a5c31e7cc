package io.rdmaactors.cm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.io.IOException;
import org.junit.jupiter.api.Test;

class AsyncEventTest {

    private static final long ELEMENT = 0x0012_3456L;

    @Test
    void qpEventsNameTheQpNumber() {
        for (AsyncEventType type : new AsyncEventType[] {AsyncEventType.QP_FATAL, AsyncEventType.QP_REQ_ERR,
                AsyncEventType.QP_ACCESS_ERR, AsyncEventType.COMM_EST, AsyncEventType.SQ_DRAINED,
                AsyncEventType.PATH_MIG, AsyncEventType.PATH_MIG_ERR, AsyncEventType.QP_LAST_WQE_REACHED}) {
            AsyncEvent.QpEvent e = assertInstanceOf(AsyncEvent.QpEvent.class,
                    AsyncEvent.fromNative(type.code(), ELEMENT), type.name());
            assertEquals(type, e.type());
            assertEquals((int) ELEMENT, e.qpNum(), type.name());
        }
    }

    @Test
    void cqAndSrqEventsNameTheirHandle() {
        AsyncEvent.CqEvent cq = assertInstanceOf(AsyncEvent.CqEvent.class,
                AsyncEvent.fromNative(AsyncEventType.CQ_ERR.code(), ELEMENT));
        assertEquals(AsyncEventType.CQ_ERR, cq.type());
        assertEquals(ELEMENT, cq.cq());
        for (AsyncEventType type : new AsyncEventType[] {AsyncEventType.SRQ_ERR, AsyncEventType.SRQ_LIMIT_REACHED}) {
            AsyncEvent.SrqEvent srq = assertInstanceOf(AsyncEvent.SrqEvent.class,
                    AsyncEvent.fromNative(type.code(), ELEMENT), type.name());
            assertEquals(type, srq.type());
            assertEquals(ELEMENT, srq.srq());
        }
    }

    @Test
    void portEventsNameThePortNumber() {
        for (AsyncEventType type : new AsyncEventType[] {AsyncEventType.PORT_ACTIVE, AsyncEventType.PORT_ERR,
                AsyncEventType.LID_CHANGE, AsyncEventType.PKEY_CHANGE, AsyncEventType.SM_CHANGE,
                AsyncEventType.CLIENT_REREGISTER, AsyncEventType.GID_CHANGE}) {
            AsyncEvent.PortEvent e = assertInstanceOf(AsyncEvent.PortEvent.class,
                    AsyncEvent.fromNative(type.code(), 2), type.name());
            assertEquals(type, e.type());
            assertEquals(2, e.portNum());
        }
    }

    @Test
    void deviceFatalIsADeviceEvent() {
        assertEquals(AsyncEventType.DEVICE_FATAL, assertInstanceOf(AsyncEvent.DeviceEvent.class,
                AsyncEvent.fromNative(AsyncEventType.DEVICE_FATAL.code(), 0)).type());
    }

    @Test
    void everyKnownCodeRoundTrips() {
        for (AsyncEventType type : AsyncEventType.values()) {
            AsyncEvent e = AsyncEvent.fromNative(type.code(), ELEMENT);
            assertEquals(type.code(), AsyncEvent.nativeCode(e), type.name());
        }
    }

    @Test
    void unknownCodeBecomesUnknownWithCodeAndElement() {
        AsyncEvent.Unknown unknown = assertInstanceOf(AsyncEvent.Unknown.class, AsyncEvent.fromNative(42, ELEMENT));
        assertEquals(42, unknown.code());
        assertEquals(ELEMENT, unknown.element());
        assertNull(unknown.type());
        assertEquals(42, AsyncEvent.nativeCode(unknown));
        assertInstanceOf(AsyncEvent.Unknown.class, AsyncEvent.fromNative(-3, ELEMENT));
    }

    @Test
    void sourceFailureHasNoNativeCode() {
        AsyncEvent failed = new AsyncEvent.SourceFailed(new IOException("gone"));
        assertNull(failed.type());
        assertEquals(-1, AsyncEvent.nativeCode(failed));
    }
}
