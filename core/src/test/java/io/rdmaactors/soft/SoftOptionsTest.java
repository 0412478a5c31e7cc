package io.rdmaactors.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.InvalidRequestException;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The soft fabric's options: typed, defaulted, and a bad one fails the open naming its key. */
class SoftOptionsTest {

    @Test
    void unsetOptionsTakeTheirDefaults() {
        SoftOptions o = SoftOptions.from(Map.of());
        assertEquals(1, o.devices());
        assertEquals(2000, o.cmTimeoutMs());
        assertTrue(o.localTransport());
        assertTrue(o.asyncWire());
        assertEquals(2, o.links().ioThreads());
        assertEquals(null, o.links().cookie());
        assertTrue(o.links().sharedMemory(), "between processes of one host");
        assertEquals(1 << 18, o.links().ringBytes());
    }

    @Test
    void givenOptionsAreRead() {
        SoftOptions o = SoftOptions.from(Map.of("devices", "3", "transport", "tcp", "wire", "sync", "io.threads", "4",
                "cookie", "off", "links.max", "7"));
        assertEquals(3, o.devices());
        assertFalse(o.localTransport());
        assertFalse(o.asyncWire());
        assertEquals(4, o.links().ioThreads());
        assertEquals("off", o.links().cookie());
        assertEquals(7, o.links().maxPerListener());
        assertFalse(o.links().sharedMemory(), "tcp: never through shared memory");
    }

    @Test
    void sharedMemoryForcesLinksThroughItInOneJvmToo() {
        SoftOptions o = SoftOptions.from(Map.of("transport", "shm", "links.shm.bytes", "65536"));
        assertFalse(o.localTransport());
        assertTrue(o.links().sharedMemory());
        assertEquals(65536, o.links().ringBytes());
    }

    @Test
    void aBadValueFailsTheOpenNamingItsKey() {
        for (Map.Entry<String, String> bad : Map.of("devices", "0", "io.threads", "two", "wire", "fast",
                "transport", "udp", "cm.timeout.ms", "-1", "links.shm.bytes", "3000").entrySet()) {
            InvalidRequestException e = assertThrows(InvalidRequestException.class,
                    () -> Fabric.open("soft", Map.of(bad.getKey(), bad.getValue())));
            assertTrue(e.getMessage().contains("soft fabric option " + bad.getKey() + " = " + bad.getValue()
                    + ": must be "), e.getMessage());
        }
    }

    @Test
    void anUnknownKeyFailsTheOpenNamingIt() {
        InvalidRequestException e = assertThrows(InvalidRequestException.class,
                () -> Fabric.open("soft", Map.of("io-threads", "2")));
        assertTrue(e.getMessage().contains("unknown soft fabric option [io-threads]"), e.getMessage());
    }
}
