package io.rdmaactors.actors;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaactors.testkit.RdmaTestKit;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.util.ByteString;
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

    /**
     * Small queues, and receive queues of the connections' own, so a suspended reader holds its
     * peer back by receiver-not-ready.
     */
    static final String SMALL_QUEUES = "rdma-actors.receive-queue-depth = 8\nrdma-actors.send-queue-depth = 4\n"
            + "rdma-actors.receive-queue = per-connection\n";

    /**
     * Suspends the server's reading and fills the receives its connection posted first with
     * numbered messages from the client, each acked: the client's next Sends wait for the reader.
     * Returns how many were sent.
     */
    static int holdTheReader(RdmaTestKit.Pair pair) {
        pair.server().tell(new RdmaProtocol.SuspendReading());
        pair.serverEvents().expectNoMessage(Duration.ofMillis(200));
        int held = RegisteredSlots.FIRST;
        for (int n = 0; n < held; n++) {
            pair.client().tell(numbered(n));
            pair.clientEvents().expectMessageClass(RdmaProtocol.Acked.class, WAIT);
        }
        return held;
    }

    /** A Send of {@code n} as 4 bytes, acked with {@code n}. */
    static RdmaProtocol.Send numbered(int n) {
        return RdmaProtocol.Send.of(ByteString.fromArray(ByteBuffer.allocate(4).putInt(n).array()), n);
    }

    /** The next {@code count} events are the numbered messages 0 to count - 1, in order. */
    static void assertReceivedInOrder(TestProbe<RdmaProtocol.ConnectionEvent> events, int count) {
        List<RdmaProtocol.ConnectionEvent> received = events.receiveSeveralMessages(count, STREAM_WAIT);
        for (int n = 0; n < count; n++) {
            assertEquals(n, ((RdmaProtocol.Received) received.get(n)).data().asByteBuffer().getInt(), "in order");
        }
    }

    /** Skips a test that needs fault injection on a fabric without it (rdma-core has none). */
    static void assumeFaultInjection(RdmaTestKit kit) {
        Assumptions.assumeTrue(kit.fabric().faults().isPresent(),
                "the " + kit.fabric().provider() + " fabric has no fault injection");
    }
}
