package io.rdmaactors.cm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.Map;
import org.junit.jupiter.api.Test;

class AsyncEventTypeTest {

    /** {@code enum ibv_event_type} as verbs.h numbers it. */
    static final Map<AsyncEventType, Integer> VERBS_H = Map.ofEntries(
            Map.entry(AsyncEventType.CQ_ERR, 0),
            Map.entry(AsyncEventType.QP_FATAL, 1),
            Map.entry(AsyncEventType.QP_REQ_ERR, 2),
            Map.entry(AsyncEventType.QP_ACCESS_ERR, 3),
            Map.entry(AsyncEventType.COMM_EST, 4),
            Map.entry(AsyncEventType.SQ_DRAINED, 5),
            Map.entry(AsyncEventType.PATH_MIG, 6),
            Map.entry(AsyncEventType.PATH_MIG_ERR, 7),
            Map.entry(AsyncEventType.DEVICE_FATAL, 8),
            Map.entry(AsyncEventType.PORT_ACTIVE, 9),
            Map.entry(AsyncEventType.PORT_ERR, 10),
            Map.entry(AsyncEventType.LID_CHANGE, 11),
            Map.entry(AsyncEventType.PKEY_CHANGE, 12),
            Map.entry(AsyncEventType.SM_CHANGE, 13),
            Map.entry(AsyncEventType.SRQ_ERR, 14),
            Map.entry(AsyncEventType.SRQ_LIMIT_REACHED, 15),
            Map.entry(AsyncEventType.QP_LAST_WQE_REACHED, 16),
            Map.entry(AsyncEventType.CLIENT_REREGISTER, 17),
            Map.entry(AsyncEventType.GID_CHANGE, 18),
            Map.entry(AsyncEventType.WQ_FATAL, 19));

    @Test
    void everyTypeHasItsNativeCodeBothWays() {
        assertEquals(VERBS_H.size(), AsyncEventType.values().length, "a type without its verbs.h code");
        VERBS_H.forEach((type, code) -> {
            assertEquals(code, type.code(), type.name());
            assertEquals(type, AsyncEventType.fromCode(code), "code " + code);
        });
    }

    @Test
    void codesOutsideTheEnumAreUnknown() {
        assertNull(AsyncEventType.fromCode(-1));
        assertNull(AsyncEventType.fromCode(20));
        assertNull(AsyncEventType.fromCode(Integer.MAX_VALUE));
    }
}
