package io.rdmaactors.actors;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.rdmaactors.verbs.CompletionQueue;
import io.rdmaactors.verbs.Device;
import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.ProtectionDomain;
import io.rdmaactors.verbs.QpAttributes;
import io.rdmaactors.verbs.QpInitAttributes;
import io.rdmaactors.verbs.QpState;
import io.rdmaactors.verbs.QueuePair;
import java.nio.ByteBuffer;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A connection's receive side without an actor: what it hands out and when (after Open, not while
 * suspended, in order, a large message once read), copied or lent in place, and the arrays and
 * slots the handler gives back.
 */
class ReceiveQueueTest {

    private static final int IN_PLACE = 1024;

    private Fabric fabric;
    private ProtectionDomain pd;
    private CompletionQueue cq;
    private QueuePair qp;
    private ConnectionBuffers buffers;
    private ReceiveQueue queue;

    @BeforeEach
    void start() {
        fabric = Fabric.open("soft");
        Device device = fabric.devices().get(0);
        pd = device.allocateProtectionDomain();
        cq = device.createCompletionQueue(64, null);
        qp = pd.createQueuePair(QpInitAttributes.rc(cq, 16, 16));
        qp.modify(QpAttributes.of().state(QpState.INIT).portNum(1).pkeyIndex(0).accessFlags(Set.of())); // receives may be posted from INIT
        RdmaSettings settings = RdmaSettings.from(ConfigFactory.load())
                .with(RdmaProtocol.ConnectionOptions.none().withReceiveQueueDepth(16).withReceiveInPlace(IN_PLACE));
        buffers = ConnectionBuffers.prepare(qp, pd, settings, null, true);
        while (buffers.receive.grow() >= 0) {
            // every slot registered: the tests name slots freely
        }
        queue = new ReceiveQueue(qp, buffers, settings);
    }

    @AfterEach
    void stop() {
        qp.close();
        buffers.close();
        cq.close();
        pd.close();
        fabric.close();
    }

    /** Puts {@code length} bytes counting up from {@code first} into receive slot {@code slot}, as a Send would. */
    private byte[] land(int slot, int length, int first) {
        byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
            bytes[i] = (byte) (first + i);
        }
        buffers.receive.memory(slot).put(buffers.receive.offset(slot), bytes);
        return bytes;
    }

    @Test
    void messagesWaitForOpenAndThenComeOutInOrder() {
        byte[] first = land(0, 10, 1);
        byte[] second = land(1, 20, 50);
        assertNull(queue.arrived(0, 10, null), "not before the handler has Connected");
        assertNull(queue.arrived(1, 20, 7));
        assertNull(queue.nextWaiting());
        assertEquals(2, queue.open(), "both took receives before Open");
        RdmaProtocol.Received one = queue.nextWaiting();
        RdmaProtocol.Received two = queue.nextWaiting();
        assertNull(queue.nextWaiting());
        assertArrayEquals(first, one.data().toArray());
        assertArrayEquals(second, two.data().toArray());
        assertEquals(7, two.immediate());
        byte[] third = land(2, 5, 90);
        assertArrayEquals(third, queue.arrived(2, 5, null).data().toArray(), "nothing waits: handed out at once");
    }

    @Test
    void whileReadingIsSuspendedMessagesWaitAndLaterOnesQueueBehindThem() {
        queue.open();
        queue.suspend(true);
        land(0, 8, 1);
        assertNull(queue.arrived(0, 8, 1));
        assertNull(queue.nextWaiting());
        queue.suspend(false);
        land(1, 8, 2);
        assertNull(queue.arrived(1, 8, 2), "behind the one still waiting");
        assertEquals(1, queue.nextWaiting().immediate());
        assertEquals(2, queue.nextWaiting().immediate());
        assertNull(queue.nextWaiting());
    }

    @Test
    void aLargeMessageHoldsBackWhatFollowsUntilItWasRead() {
        queue.open();
        ReceiveQueue.Large large = queue.announced(3);
        land(0, 8, 1);
        assertNull(queue.arrived(0, 8, 4), "behind the large one");
        assertNull(queue.nextWaiting(), "the large one is still being read");
        try (MemoryRegion region = pd.register(ByteBuffer.allocateDirect(100).put(0, (byte) 42))) {
            assertFalse(queue.read(large, region, 100), "below receive-in-place it is copied out, the region free");
        }
        RdmaProtocol.Received read = queue.nextWaiting();
        assertEquals(3, read.immediate());
        assertEquals(100, read.size());
        assertEquals(42, read.data().apply(0));
        assertEquals(4, queue.nextWaiting().immediate());
    }

    @Test
    void fromReceiveInPlaceAMessageIsLentInItsSlotUntilReleased() {
        queue.open();
        byte[] bytes = land(5, IN_PLACE, 3);
        RdmaProtocol.Received lent = queue.arrived(5, IN_PLACE, null);
        assertNotNull(lent.slice(), "left in its receive buffer");
        assertEquals(ByteBuffer.wrap(bytes), lent.buffer());
        assertTrue(queue.takeBackSlot(lent));
        assertFalse(queue.takeBackSlot(lent), "a slot comes back once");
        assertNull(lent.slice());
        queue.repostAll();
        RdmaProtocol.Received copied = queue.arrived(6, 10, null);
        assertNull(copied.slice(), "smaller ones are copied out");
        assertFalse(queue.takeBackSlot(copied), "and lent no slot");
    }

    @Test
    void anArrayTheHandlerReleasedCarriesALaterMessage() {
        queue.open();
        land(0, 300, 1);
        RdmaProtocol.Received first = queue.arrived(0, 300, null);
        byte[] array = first.takeArray();
        assertNotNull(array, "from 256 bytes on a copy may be released");
        queue.keep(array);
        byte[] later = land(1, 280, 9);
        RdmaProtocol.Received second = queue.arrived(1, 280, null);
        assertArrayEquals(later, second.data().toArray());
        assertSame(array, second.takeArray(), "copied into the released array");
        RdmaProtocol.Received small = queue.arrived(2, 100, null);
        assertNull(small.takeArray(), "a small one is not worth a Release");
    }
}
