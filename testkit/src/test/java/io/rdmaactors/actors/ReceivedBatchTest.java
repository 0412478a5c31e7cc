package io.rdmaactors.actors;

import static io.rdmaactors.actors.Connections.WAIT;
import static io.rdmaactors.actors.Connections.numbered;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaactors.actors.RdmaProtocol.ConnectionEvent;
import io.rdmaactors.actors.streams.RdmaStreams;
import io.rdmaactors.testkit.RdmaTestKit;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A connection whose options ask for batches hands its handler a poll's messages in one ReceivedBatch. */
class ReceivedBatchTest {

    private static final RdmaProtocol.ConnectionOptions BATCHES =
            RdmaProtocol.ConnectionOptions.none().withReceivedBatches();

    private RdmaTestKit kit;

    @AfterEach
    void stop() {
        kit.close();
    }

    /**
     * The numbers the next ReceivedBatch events carry, a list a batch, until {@code count} came,
     * each message given to {@code each} as it is read; fails on any other event.
     */
    private static List<List<Integer>> receiveBatches(TestProbe<ConnectionEvent> events, int count,
                                                      Consumer<RdmaProtocol.Received> each) {
        List<List<Integer>> batches = new ArrayList<>();
        for (int received = 0; received < count; ) {
            RdmaProtocol.ReceivedBatch batch = events.expectMessageClass(RdmaProtocol.ReceivedBatch.class,
                    Connections.STREAM_WAIT);
            List<Integer> numbers = new ArrayList<>();
            for (RdmaProtocol.Received r : batch.messages()) {
                numbers.add(r.data().asByteBuffer().getInt());
                each.accept(r);
            }
            batches.add(numbers);
            received += numbers.size();
        }
        return batches;
    }

    /** The batches' numbers in the order they came. */
    private static List<Integer> inOrder(List<List<Integer>> batches) {
        return batches.stream().flatMap(List::stream).toList();
    }

    private static List<Integer> upTo(int count) {
        List<Integer> numbers = new ArrayList<>();
        for (int n = 0; n < count; n++) {
            numbers.add(n);
        }
        return numbers;
    }

    @Test
    void messagesComeInBatchesInOrderEachOnceAndTheDisconnectAfterThem() {
        kit = RdmaTestKit.create();
        RdmaTestKit.Listener listener = kit.listen(4, BATCHES);
        RdmaTestKit.Pair pair = kit.connect(listener);
        List<RdmaProtocol.DataCommand> sends = new ArrayList<>();
        for (int n = 0; n < 500; n++) {
            sends.add(numbered(n));
        }
        pair.client().tell(new RdmaProtocol.Batch(sends));
        pair.client().tell(new RdmaProtocol.Close());
        assertEquals(upTo(500), inOrder(receiveBatches(pair.serverEvents(), 500, r -> { })));
        // the client's own end did not ask for batches: its events are the usual ones
        for (int n = 0; n < 500; n++) {
            assertEquals(n, pair.clientEvents().expectMessageClass(RdmaProtocol.Acked.class, WAIT).token());
        }
        assertInstanceOf(RdmaProtocol.PeerClosed.class,
                pair.serverEvents().expectMessageClass(RdmaProtocol.Disconnected.class, WAIT).reason());
        RdmaTestKit.awaitDisconnected(pair.clientEvents());
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void whatWaitedForAResumedReaderComesAsOneBatch() {
        kit = RdmaTestKit.create(Connections.SMALL_QUEUES);
        RdmaTestKit.Listener listener = kit.listen(4, BATCHES);
        RdmaTestKit.Pair pair = kit.connect(listener);
        int held = Connections.holdTheReader(pair);
        pair.server().tell(new RdmaProtocol.ResumeReading());
        assertEquals(List.of(upTo(held)), receiveBatches(pair.serverEvents(), held, r -> { }));
        kit.close(pair);
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void eachMessageOfABatchReceivedInPlaceIsReleasedAlone() {
        // more messages than receive buffers: the later ones need the buffers the earlier ones release
        kit = RdmaTestKit.create(Connections.SMALL_QUEUES);
        RdmaTestKit.Listener listener = kit.listen(4, BATCHES.withReceiveInPlace(1));
        RdmaTestKit.Pair pair = kit.connect(listener);
        for (int n = 0; n < 40; n++) {
            pair.client().tell(numbered(n));
        }
        assertEquals(upTo(40), inOrder(receiveBatches(pair.serverEvents(), 40, r -> {
            assertTrue(r.releasable(), "received in place");
            pair.server().tell(new RdmaProtocol.Release(r));
        })));
        kit.close(pair);
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void aReceivedBatchCarriesAtLeastOneMessageAndNoNullAndIsNoStreamsOption() {
        kit = RdmaTestKit.create();
        assertThrows(IllegalArgumentException.class, () -> new RdmaProtocol.ReceivedBatch(List.of()));
        List<RdmaProtocol.Received> withNull = new ArrayList<>();
        withNull.add(null);
        assertThrows(NullPointerException.class, () -> new RdmaProtocol.ReceivedBatch(withNull));
        // a stream's stage takes one message an event
        assertThrows(IllegalArgumentException.class,
                () -> RdmaStreams.Options.defaults().withConnectionOptions(BATCHES));
    }
}
