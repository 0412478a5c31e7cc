package io.rdmaactors.cm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.Map;
import org.junit.jupiter.api.Test;

class CmEventTypeTest {

    /** {@code enum rdma_cm_event_type} as rdma_cma.h numbers it. */
    static final Map<CmEventType, Integer> RDMA_CMA_H = Map.ofEntries(
            Map.entry(CmEventType.ADDR_RESOLVED, 0),
            Map.entry(CmEventType.ADDR_ERROR, 1),
            Map.entry(CmEventType.ROUTE_RESOLVED, 2),
            Map.entry(CmEventType.ROUTE_ERROR, 3),
            Map.entry(CmEventType.CONNECT_REQUEST, 4),
            Map.entry(CmEventType.CONNECT_RESPONSE, 5),
            Map.entry(CmEventType.CONNECT_ERROR, 6),
            Map.entry(CmEventType.UNREACHABLE, 7),
            Map.entry(CmEventType.REJECTED, 8),
            Map.entry(CmEventType.ESTABLISHED, 9),
            Map.entry(CmEventType.DISCONNECTED, 10),
            Map.entry(CmEventType.DEVICE_REMOVAL, 11),
            Map.entry(CmEventType.MULTICAST_JOIN, 12),
            Map.entry(CmEventType.MULTICAST_ERROR, 13),
            Map.entry(CmEventType.ADDR_CHANGE, 14),
            Map.entry(CmEventType.TIMEWAIT_EXIT, 15));

    @Test
    void everyTypeHasItsNativeCodeBothWays() {
        assertEquals(RDMA_CMA_H.size(), CmEventType.values().length, "a type without its rdma_cma.h code");
        RDMA_CMA_H.forEach((type, code) -> {
            assertEquals(code, type.code(), type.name());
            assertEquals(type, CmEventType.fromCode(code), "code " + code);
        });
    }

    @Test
    void codesOutsideTheEnumAreUnknown() {
        assertNull(CmEventType.fromCode(-1));
        assertNull(CmEventType.fromCode(16));
        assertNull(CmEventType.fromCode(Integer.MAX_VALUE));
    }
}
