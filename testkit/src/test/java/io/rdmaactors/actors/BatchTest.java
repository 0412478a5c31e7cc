package io.rdmaactors.actors;

import static io.rdmaactors.actors.Connections.WAIT;
import static io.rdmaactors.actors.Connections.numbered;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.rdmaactors.actors.RdmaProtocol.ConnectionEvent;
import io.rdmaactors.testkit.RdmaTestKit;
import io.rdmaactors.verbs.QueueFullException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A Batch is its commands told one after another: each arrives, in order, and each is answered once where it says. */
class BatchTest {

    private RdmaTestKit kit;

    @AfterEach
    void stop() {
        kit.close();
    }

    private static RdmaProtocol.Batch batch(int from, int count) {
        List<RdmaProtocol.DataCommand> sends = new ArrayList<>();
        for (int n = from; n < from + count; n++) {
            sends.add(numbered(n));
        }
        return new RdmaProtocol.Batch(sends);
    }

    @Test
    void aBatchArrivesAsItsMessagesInOrderEachAnsweredWhereItSays() {
        kit = RdmaTestKit.create();
        RdmaTestKit.Listener listener = kit.listen(4);
        RdmaTestKit.Pair pair = kit.connect(listener);
        TestProbe<ConnectionEvent> elsewhere = kit.probe();
        // more than the send queue holds: the rest wait in the write queue, as single Sends would
        List<RdmaProtocol.DataCommand> sends = new ArrayList<>(batch(0, 300).commands());
        sends.set(7, numbered(7).withReplyTo(elsewhere.getRef()));
        pair.client().tell(new RdmaProtocol.Batch(sends));
        pair.client().tell(batch(300, 2));
        Connections.assertReceivedInOrder(pair.serverEvents(), 302);
        for (int n = 0; n < 302; n++) {
            if (n != 7) {
                assertEquals(n, pair.clientEvents().expectMessageClass(RdmaProtocol.Acked.class, WAIT).token());
            }
        }
        assertEquals(7, elsewhere.expectMessageClass(RdmaProtocol.Acked.class, WAIT).token());
        pair.clientEvents().expectNoMessage(Duration.ofMillis(100));
        kit.close(pair);
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void whatTheWriteQueueCannotTakeIsRefusedCommandByCommand() {
        kit = RdmaTestKit.create(Connections.SMALL_QUEUES + "rdma-actors.write-queue = 2\n");
        RdmaTestKit.Listener listener = kit.listen(4);
        RdmaTestKit.Pair pair = kit.connect(listener);
        // a reader that suspended holds its receives: sends wait for receiver-not-ready retries
        int held = Connections.holdTheReader(pair);
        // 4 in the send queue and 2 in the write queue; the batch's last two are refused, each alone,
        // and the first refusal suspends writing, as with single Sends
        RdmaProtocol.Batch batch = batch(held, 8);
        pair.client().tell(batch);
        assertRefused(batch.commands().get(6), pair.clientEvents());
        pair.clientEvents().expectMessageClass(RdmaProtocol.WritingSuspended.class, WAIT);
        assertRefused(batch.commands().get(7), pair.clientEvents());
        pair.client().tell(new RdmaProtocol.ResumeWriting());
        pair.server().tell(new RdmaProtocol.ResumeReading());
        Connections.assertReceivedInOrder(pair.serverEvents(), held + 6);
        kit.close(pair);
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    private static void assertRefused(RdmaProtocol.DataCommand command, TestProbe<ConnectionEvent> events) {
        RdmaProtocol.CommandFailed refused = events.expectMessageClass(RdmaProtocol.CommandFailed.class, WAIT);
        assertSame(command, refused.command());
        assertInstanceOf(QueueFullException.class, refused.cause());
    }

    @Test
    void aBatchToAClosedConnectionHasEachCommandRefused() {
        kit = RdmaTestKit.create();
        RdmaTestKit.Listener listener = kit.listen(4);
        RdmaTestKit.Pair pair = kit.connect(listener);
        kit.close(pair);
        TestProbe<ConnectionEvent> elsewhere = kit.probe();
        RdmaProtocol.Batch batch = RdmaProtocol.Batch.of(numbered(0), numbered(1).withReplyTo(elsewhere.getRef()),
                numbered(2));
        pair.client().tell(batch);
        for (RdmaProtocol.DataCommand command : List.of(batch.commands().get(0), batch.commands().get(2))) {
            RdmaProtocol.CommandFailed failed = pair.clientEvents().expectMessageClass(RdmaProtocol.CommandFailed.class,
                    WAIT);
            assertSame(command, failed.command());
            assertInstanceOf(RdmaProtocol.ConnectionClosed.class, failed.cause());
        }
        assertSame(batch.commands().get(1), elsewhere.expectMessageClass(RdmaProtocol.CommandFailed.class, WAIT)
                .command());
        pair.clientEvents().expectNoMessage(Duration.ofMillis(100));
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void aBatchCarriesAtLeastOneCommandAndNoNull() {
        kit = RdmaTestKit.create();
        assertThrows(IllegalArgumentException.class, () -> new RdmaProtocol.Batch(List.of()));
        assertThrows(NullPointerException.class, () -> RdmaProtocol.Batch.of(numbered(0), null));
    }
}
