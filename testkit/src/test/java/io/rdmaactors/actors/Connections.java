package io.rdmaactors.actors;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaactors.testkit.RdmaTestKit;
import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.api.Assumptions;

/** What the actor tests share beyond RdmaTestKit: step waits and assertions. */
final class Connections {

    static final Duration WAIT = Duration.ofSeconds(10);
    /** How long a test waits for hundreds of messages: a liveness bound, generous for emulated rdma-core. */
    static final Duration STREAM_WAIT = Duration.ofSeconds(120);

    private Connections() {
    }

    /**
     * Private data as sent, where the CM may pad it with zeros to its message's size (InfiniBand and
     * RoCE deliver 56 bytes for a connect, 196 for an accept, 148 for a reject).
     */
    static void assertPrivateData(byte[] sent, byte[] received) {
        assertTrue(received.length >= sent.length, "private data cut short: " + received.length + " < " + sent.length);
        assertArrayEquals(sent, Arrays.copyOf(received, sent.length), "private data as sent");
        for (int i = sent.length; i < received.length; i++) {
            assertEquals(0, received[i], "private data padded with zeros only");
        }
    }

    /** Skips a test that needs fault injection on a fabric without it (rdma-core has none). */
    static void assumeFaultInjection(RdmaTestKit kit) {
        Assumptions.assumeTrue(kit.fabric().faults().isPresent(),
                "the " + kit.fabric().provider() + " fabric has no fault injection");
    }
}
