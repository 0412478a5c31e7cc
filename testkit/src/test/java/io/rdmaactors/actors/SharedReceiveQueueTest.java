package io.rdmaactors.actors;

import static io.rdmaactors.actors.Connections.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.rdmaactors.actors.RdmaProtocol.ConnectionEvent;
import io.rdmaactors.testkit.RdmaTestKit;
import io.rdmaactors.verbs.ResourceKind;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The multi-QP server: 16 connections receive from one shared receive queue. */
class SharedReceiveQueueTest {

    private static final int CONNECTIONS = 16;
    private static final int MESSAGES = 200;
    /** Sends in flight per connection: together more than the SRQ holds, so receivers-not-ready happen. */
    private static final int WINDOW = 8;

    private RdmaTestKit kit;

    @BeforeEach
    void start() {
        kit = RdmaTestKit.create("rdma-actors.receive-queue-depth = 8");
    }

    @AfterEach
    void stop() {
        kit.close();
    }

    @Test
    void sixteenQueuePairsShareOneSrqAndEachReceiveReachesItsOwnConnection() {
        TestProbe<RdmaProtocol.ListenerEvent> bind = kit.probe();
        kit.manager().tell(new RdmaProtocol.Listen(kit.address(0), bind.getRef(), CONNECTIONS,
                true));
        RdmaTestKit.Listener listener = new RdmaTestKit.Listener(bind,
                bind.expectMessageClass(RdmaProtocol.Listening.class, WAIT));
        List<RdmaTestKit.Pair> pairs = new ArrayList<>();
        for (int c = 0; c < CONNECTIONS; c++) {
            pairs.add(kit.connect(listener));
        }
        assertEquals(1, kit.fabric().ledger().live(ResourceKind.SHARED_RECEIVE_QUEUE), "one SRQ for all");
        assertEquals(CONNECTIONS * 2L, kit.fabric().ledger().live(ResourceKind.QUEUE_PAIR));
        for (int round = 0; round < MESSAGES / WINDOW; round++) {
            for (int c = 0; c < CONNECTIONS; c++) {
                for (int i = 0; i < WINDOW; i++) {
                    int n = round * WINDOW + i;
                    pairs.get(c).client().tell(RdmaProtocol.Send.of(
                            ByteBuffer.allocate(8).putInt(c).putInt(n).array(), n));
                }
            }
            for (RdmaTestKit.Pair p : pairs) {
                p.clientEvents().receiveSeveralMessages(WINDOW, WAIT)
                        .forEach(e -> assertInstanceOf(RdmaProtocol.Acked.class, e));
            }
        }
        for (int c = 0; c < CONNECTIONS; c++) {
            List<ConnectionEvent> received = pairs.get(c).serverEvents().receiveSeveralMessages(MESSAGES, WAIT);
            for (int n = 0; n < MESSAGES; n++) {
                ByteBuffer data = ((RdmaProtocol.Received) received.get(n)).data().asByteBuffer();
                assertEquals(c, data.getInt(), "a receive reached another connection");
                assertEquals(n, data.getInt());
            }
        }
        pairs.forEach(p -> kit.close(p));
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    /**
     * A client's closing notice reaches an SRQ server through the SRQ's completion queue, apart from
     * the disconnect: the server still hears PeerClosed, never a failure, however the two race.
     */
    @Test
    void anSrqServerHearsAClientsCloseAsPeerClosed() {
        TestProbe<RdmaProtocol.ListenerEvent> bind = kit.probe();
        kit.manager().tell(new RdmaProtocol.Listen(kit.address(0), bind.getRef(), CONNECTIONS, true));
        RdmaTestKit.Listener listener = new RdmaTestKit.Listener(bind,
                bind.expectMessageClass(RdmaProtocol.Listening.class, WAIT));
        for (int round = 0; round < 20; round++) {
            RdmaTestKit.Pair pair = kit.connect(listener);
            pair.client().tell(new RdmaProtocol.Close());
            assertInstanceOf(RdmaProtocol.PeerClosed.class, RdmaTestKit.awaitDisconnected(pair.serverEvents()).reason(),
                    "round " + round);
            RdmaTestKit.awaitDisconnected(pair.clientEvents());
        }
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }
}
