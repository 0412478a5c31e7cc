package io.rdmaactors.cm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.io.IOException;
import org.junit.jupiter.api.Test;

class CmEventTest {

    private static final long ID = 0x7000_0001L;
    private static final long LISTEN_ID = 0x7000_0002L;
    private static final int STATUS = -110;
    private static final byte[] DATA = {1, 2, 3, 4};
    private static final UdParameters UD = new UdParameters(0xFFFFFF, 0x1234_5678,
            AddressVector.global(new byte[16], 1));

    private static CmEvent fromNative(CmEventType type) {
        return CmEvent.fromNative(type.code(), ID, LISTEN_ID, STATUS, DATA, UD);
    }

    @Test
    void everyKnownCodeGivesTheRecordOfItsType() {
        for (CmEventType type : CmEventType.values()) {
            CmEvent e = fromNative(type);
            assertEquals(type, e.type(), type.name());
            assertEquals(ID, e.id(), type.name());
            assertEquals(type.code(), CmEvent.nativeCode(e), type.name());
        }
    }

    @Test
    void errorEventsCarryTheStatus() {
        assertEquals(STATUS, assertInstanceOf(CmEvent.AddrError.class, fromNative(CmEventType.ADDR_ERROR)).status());
        assertEquals(STATUS, assertInstanceOf(CmEvent.RouteError.class, fromNative(CmEventType.ROUTE_ERROR)).status());
        assertEquals(STATUS, assertInstanceOf(CmEvent.ConnectError.class,
                fromNative(CmEventType.CONNECT_ERROR)).status());
        assertEquals(STATUS, assertInstanceOf(CmEvent.Unreachable.class, fromNative(CmEventType.UNREACHABLE)).status());
        assertEquals(STATUS, assertInstanceOf(CmEvent.MulticastError.class,
                fromNative(CmEventType.MULTICAST_ERROR)).status());
        // events without a status field report 0, whatever the native status said
        assertEquals(0, fromNative(CmEventType.ESTABLISHED).status());
        assertEquals(0, fromNative(CmEventType.DISCONNECTED).status());
    }

    @Test
    void connectionEventsCarryPrivateDataAndUdParameters() {
        CmEvent.ConnectRequest request = assertInstanceOf(CmEvent.ConnectRequest.class,
                fromNative(CmEventType.CONNECT_REQUEST));
        assertEquals(LISTEN_ID, request.listenId());
        assertArrayEquals(DATA, request.privateData());
        assertSame(UD, request.ud());

        assertArrayEquals(DATA, assertInstanceOf(CmEvent.ConnectResponse.class,
                fromNative(CmEventType.CONNECT_RESPONSE)).privateData());

        CmEvent.Rejected rejected = assertInstanceOf(CmEvent.Rejected.class, fromNative(CmEventType.REJECTED));
        assertEquals(STATUS, rejected.status());
        assertArrayEquals(DATA, rejected.privateData());

        CmEvent.Established established = assertInstanceOf(CmEvent.Established.class,
                fromNative(CmEventType.ESTABLISHED));
        assertArrayEquals(DATA, established.privateData());
        assertSame(UD, established.ud());

        assertSame(UD, assertInstanceOf(CmEvent.MulticastJoin.class, fromNative(CmEventType.MULTICAST_JOIN)).ud());
    }

    @Test
    void eventsWithoutPayloadAreTheirOwnRecords() {
        assertInstanceOf(CmEvent.AddrResolved.class, fromNative(CmEventType.ADDR_RESOLVED));
        assertInstanceOf(CmEvent.RouteResolved.class, fromNative(CmEventType.ROUTE_RESOLVED));
        assertInstanceOf(CmEvent.Disconnected.class, fromNative(CmEventType.DISCONNECTED));
        assertInstanceOf(CmEvent.DeviceRemoval.class, fromNative(CmEventType.DEVICE_REMOVAL));
        assertInstanceOf(CmEvent.AddrChange.class, fromNative(CmEventType.ADDR_CHANGE));
        assertInstanceOf(CmEvent.TimewaitExit.class, fromNative(CmEventType.TIMEWAIT_EXIT));
    }

    @Test
    void missingPrivateDataReadsAsEmpty() {
        CmEvent.Rejected rejected = assertInstanceOf(CmEvent.Rejected.class,
                CmEvent.fromNative(CmEventType.REJECTED.code(), ID, 0, 8, null, null));
        assertArrayEquals(new byte[0], rejected.privateData());
    }

    @Test
    void unknownCodeBecomesUnknownWithItsCode() {
        CmEvent.Unknown unknown = assertInstanceOf(CmEvent.Unknown.class,
                CmEvent.fromNative(99, ID, LISTEN_ID, STATUS, DATA, UD));
        assertEquals(99, unknown.code());
        assertEquals(ID, unknown.id());
        assertEquals(STATUS, unknown.status());
        assertNull(unknown.type());
        assertEquals(99, CmEvent.nativeCode(unknown));

        assertInstanceOf(CmEvent.Unknown.class, CmEvent.fromNative(-1, ID, 0, 0, null, null));
    }

    @Test
    void channelFailureHasNoNativeCode() {
        CmEvent failed = new CmEvent.ChannelFailed(new IOException("gone"));
        assertNull(failed.type());
        assertEquals(-1, CmEvent.nativeCode(failed));
    }
}
