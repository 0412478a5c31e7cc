package io.rdmaactors.actors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.ProtectionDomain;
import io.rdmaactors.verbs.SendFlag;
import io.rdmaactors.verbs.SendWorkRequest;
import java.util.List;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A connection's send side without an actor: room, lazy registration, the write queue's limit, fencing, draining. */
class SendQueueTest {

    private Fabric fabric;
    private ProtectionDomain pd;
    private RegisteredSlots slots;
    private SendQueue queue;

    @BeforeEach
    void start() {
        fabric = Fabric.open("soft");
        pd = fabric.devices().get(0).allocateProtectionDomain();
        slots = new RegisteredSlots(pd, 64, 12);
        queue = new SendQueue(slots, 3);
    }

    @AfterEach
    void stop() {
        slots.close();
        pd.close();
        fabric.close();
    }

    @Test
    void roomCountsSlotsNotYetRegisteredAndATakenSlotRegistersAChunk() {
        assertEquals(12, queue.room());
        assertTrue(queue.idle());
        assertEquals(0, slots.allocated(), "nothing registered before a slot is needed");
        int slot = queue.takeSlot();
        assertEquals(RegisteredSlots.FIRST, slots.allocated());
        queue.hold(slot, "a send");
        assertEquals(11, queue.room());
        assertFalse(queue.idle());
        assertEquals("a send", queue.vacate(slot));
        assertEquals(12, queue.room());
        assertTrue(queue.idle());
    }

    @Test
    void theWriteQueueTakesItsLimitBeyondTheRoomLeft() {
        for (int i = 0; i < 12 + 3; i++) {
            assertTrue(queue.hasRoomForCommand(), "command " + i);
            queue.enqueue(i);
        }
        assertFalse(queue.hasRoomForCommand());
        assertEquals(12, queue.postable(), "only the send queue's room can be posted now");
        assertEquals(0, queue.nextWaiting(false, item -> true, item -> false), "oldest first");
    }

    /**
     * While the peer's reader is paused, what would take one of its receives waits, and so does what
     * follows it (the connection's commands take effect in order), but for the connection's own
     * control steps, which pass; what precedes the first held item goes as before.
     */
    @Test
    void aPausedPeerHoldsBackWhatTakesItsReceivesAndWhatFollowsButControlSteps() {
        queue.enqueue("write");
        queue.enqueue("send");
        queue.enqueue("read");
        queue.enqueue("done");
        Predicate<Object> takesReceive = "send"::equals;
        Predicate<Object> control = "done"::equals;
        assertEquals("write", queue.nextWaiting(true, takesReceive, control));
        assertEquals("done", queue.nextWaiting(true, takesReceive, control), "a control step passes");
        assertNull(queue.nextWaiting(true, takesReceive, control), "the read waits behind the send");
        assertTrue(queue.removeWaiting("read"::equals));
        assertFalse(queue.removeWaiting("read"::equals));
        assertEquals("send", queue.nextWaiting(false, takesReceive, control), "resumed");
        assertTrue(queue.nothingWaiting());
    }

    @Test
    void whatFollowsAnOutstandingReadIsFencedAndReadsAreNot() {
        SendWorkRequest send = SendWorkRequest.send(1);
        assertFalse(queue.fenced(send, false).has(SendFlag.FENCE), "no read outstanding");
        int read = queue.takeSlot();
        queue.hold(read, RdmaProtocol.Read.of(new RemoteRegion(4096, 64, 7), 0, 8, null));
        assertTrue(queue.fenced(send, false).has(SendFlag.FENCE));
        assertFalse(queue.fenced(send, true).has(SendFlag.FENCE), "a read does not wait for a read");
        queue.vacate(read);
        assertFalse(queue.fenced(send, false).has(SendFlag.FENCE), "the read completed");
    }

    @Test
    void drainingGivesWhatWaitedThenWhatWasOutstandingEachOnce() {
        int first = queue.takeSlot();
        queue.hold(first, "outstanding");
        queue.enqueue("waiting");
        assertEquals(List.of("waiting", "outstanding"), queue.drain());
        assertTrue(queue.idle());
        assertEquals(List.of(), queue.drain());
    }

    @Test
    void everySlotUpToTheDepthIsHeldAsChunksAreRegistered() {
        assertFalse(queue.holds(0), "nothing held before a slot is registered");
        for (int i = 0; i < 12; i++) {
            int slot = queue.takeSlot();
            assertFalse(queue.holds(slot));
            queue.hold(slot, i);
            assertTrue(queue.holds(slot));
        }
        assertEquals(12, slots.allocated());
        assertEquals(0, queue.room());
        assertEquals(12, queue.drain().size());
        assertTrue(queue.idle());
    }
}
