package io.rdmaactors.actors;

import static io.rdmaactors.actors.Connections.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.rdmaactors.testkit.RdmaTestKit;
import io.rdmaactors.verbs.ResourceKind;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code receive-queue = per-device}: both ends of every connection (one device in one JVM) receive
 * from the device's shared receive queue, each receive on its own connection's CQ.
 */
class DeviceReceiveQueueTest {

    private static final int CONNECTIONS = 8;
    /** More than the device queue's 32 slots in flight at once, so receivers-not-ready happen. */
    private static final int MESSAGES = 40;

    private RdmaTestKit kit;

    @BeforeEach
    void start() {
        kit = RdmaTestKit.create("rdma-actors.receive-queue = per-device\nrdma-actors.receive-queue-depth = 8");
    }

    @AfterEach
    void stop() {
        kit.close();
    }

    @Test
    void everyConnectionReceivesItsOwnMessagesInOrderFromTheDevicesQueue() {
        long domains = kit.fabric().ledger().live(ResourceKind.PROTECTION_DOMAIN);
        assertEquals(1, kit.fabric().ledger().live(ResourceKind.SHARED_RECEIVE_QUEUE), "the device's, made at start");
        RdmaTestKit.Listener listener = kit.listen(CONNECTIONS * 2);
        List<RdmaTestKit.Pair> pairs = new ArrayList<>();
        for (int c = 0; c < CONNECTIONS; c++) {
            pairs.add(kit.connect(listener));
        }
        assertEquals(domains, kit.fabric().ledger().live(ResourceKind.PROTECTION_DOMAIN), "no domain per connection");
        assertEquals(1, kit.fabric().ledger().live(ResourceKind.SHARED_RECEIVE_QUEUE));
        for (int c = 0; c < CONNECTIONS; c++) {
            for (int n = 0; n < MESSAGES; n++) {
                byte[] message = ByteBuffer.allocate(8).putInt(c).putInt(n).array();
                pairs.get(c).client().tell(RdmaProtocol.Send.of(message, n));
                pairs.get(c).server().tell(RdmaProtocol.Send.of(message, n));
            }
        }
        for (int c = 0; c < CONNECTIONS; c++) {
            for (TestProbe<RdmaProtocol.ConnectionEvent> end : List.of(pairs.get(c).clientEvents(),
                    pairs.get(c).serverEvents())) {
                List<RdmaProtocol.ConnectionEvent> events = end.receiveSeveralMessages(2 * MESSAGES, WAIT);
                assertEquals(MESSAGES, events.stream().filter(RdmaProtocol.Acked.class::isInstance).count());
                assertInOrder(c, events.stream().filter(RdmaProtocol.Received.class::isInstance).toList());
            }
        }
        pairs.forEach(p -> kit.close(p));
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    private static void assertInOrder(int connection, List<? extends RdmaProtocol.ConnectionEvent> events) {
        assertEquals(MESSAGES, events.size());
        for (int n = 0; n < MESSAGES; n++) {
            ByteBuffer data = assertInstanceOf(RdmaProtocol.Received.class, events.get(n)).data().asByteBuffer();
            assertEquals(connection, data.getInt(), "a receive reached another connection");
            assertEquals(n, data.getInt());
        }
    }

    @Test
    void aSuspendedReaderHoldsItsPeerBack() {
        RdmaTestKit.Listener listener = kit.listen(CONNECTIONS * 2);
        RdmaTestKit.Pair pair = kit.connect(listener);
        SharedReceiveQueueTest.suspendedReaderHoldsItsPeerBack(pair);
        kit.close(pair);
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void anExportReachesItsOwnPeerAlone() {
        RdmaTestKit.Listener listener = kit.listen(CONNECTIONS * 2);
        SharedReceiveQueueTest.exportReachesItsOwnPeerAlone(kit, kit.connect(listener), kit.connect(listener));
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void largeSendsAreReadThroughWindows() {
        RdmaTestKit.Listener listener = kit.listen(CONNECTIONS * 2);
        RdmaTestKit.Pair pair = kit.connect(listener);
        SharedReceiveQueueTest.largeSendsArriveWhole(kit, pair);
        kit.close(pair);
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    /** A connection that receives in place keeps a receive queue and buffers of its own, and its own domain. */
    @Test
    void receivingInPlaceKeepsQueuesOfItsOwn() {
        long domains = kit.fabric().ledger().live(ResourceKind.PROTECTION_DOMAIN);
        RdmaTestKit.Listener listener = kit.listen(CONNECTIONS * 2);
        RdmaTestKit.Pair pair = kit.connect(listener, RdmaProtocol.ConnectionOptions.none().withReceiveInPlace(64));
        assertEquals(domains + 1, kit.fabric().ledger().live(ResourceKind.PROTECTION_DOMAIN));
        pair.server().tell(RdmaProtocol.Send.of(new byte[128], "in place"));
        RdmaProtocol.Received received = pair.clientEvents().expectMessageClass(RdmaProtocol.Received.class, WAIT);
        assertEquals(128, received.data().size());
        pair.client().tell(new RdmaProtocol.Release(received));
        kit.close(pair);
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }
}
