package io.rdmaactors.actors;

import static io.rdmaactors.actors.Connections.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaactors.cm.CmEventType;
import io.rdmaactors.testkit.RdmaTestKit;
import io.rdmaactors.verbs.ResourceKind;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** An idle connection pins one chunk of receive slots; traffic grows the slots up to the queue depths. */
class BufferGrowthTest {

    private static final int DEPTH = 64;

    private RdmaTestKit kit;

    /** A connection's own receive queue grows; the device's shared one is registered whole at start. */
    @BeforeEach
    void start() {
        kit = RdmaTestKit.create("rdma-actors.send-queue-depth = " + DEPTH + "\nrdma-actors.receive-queue-depth = "
                + DEPTH + "\nrdma-actors.buffer-size = 256\nrdma-actors.receive-queue = per-connection");
    }

    @AfterEach
    void stop() {
        kit.close();
    }

    @Test
    void bothEndsAskTheirSendersToWaitTheShortestReceiverNotReadyStep() {
        // the kit finds a connection's QP through the soft fabric's fault injector
        Connections.assumeFaultInjection(kit);
        RdmaTestKit.Listener listener = kit.listen(4);
        RdmaTestKit.Pair pair = kit.connect(listener);
        // rdma_cm's 0.64 ms (12) stalled a stream each time its receiver fell behind; 1 is 0.01 ms.
        // The QP actor sets it when its handler has Connected, so the probe may see Connected first
        for (RdmaProtocol.Connected end : new RdmaProtocol.Connected[] {pair.clientConnected(),
                pair.serverConnected()}) {
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (kit.queuePair(end).query().minRnrTimer() != 1 && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertEquals(1, kit.queuePair(end).query().minRnrTimer());
        }
        kit.close(pair);
        kit.unbind(listener);
    }

    @Test
    void anIdleConnectionRegistersOneChunkPerEndAndABurstGrowsItWithoutLoss() {
        RdmaTestKit.Listener listener = kit.listen(4);
        long before = kit.fabric().ledger().live(ResourceKind.MEMORY_REGION);
        RdmaTestKit.Pair pair = kit.connect(listener);
        assertEquals(before + 2, kit.fabric().ledger().live(ResourceKind.MEMORY_REGION),
                "an idle connection registers one receive chunk per end and no send slots");
        // whole send queues at once: more than the receives first posted. The receiver grows when a
        // poll finds half its receives used, which depends on how the burst meets its polls, so
        // bursts go on until it did (the first one nearly always suffices)
        long chunksPerQueue = RegisteredSlots.chunksFor(DEPTH);
        long registered = 0;
        for (int burst = 0; burst < 20 && registered <= 2 + chunksPerQueue; burst++) {
            for (int n = 0; n < DEPTH; n++) {
                pair.client().tell(RdmaProtocol.Send.of(ByteBuffer.allocate(4).putInt(n).array(), n));
            }
            for (int n = 0; n < DEPTH; n++) {
                RdmaProtocol.Received r = assertInstanceOf(RdmaProtocol.Received.class,
                        pair.serverEvents().receiveMessage(WAIT));
                assertEquals(n, r.data().asByteBuffer().getInt(), "delivered in order");
            }
            assertEquals(DEPTH, pair.clientEvents().receiveSeveralMessages(DEPTH, WAIT).stream()
                    .filter(RdmaProtocol.Acked.class::isInstance).count());
            registered = kit.fabric().ledger().live(ResourceKind.MEMORY_REGION) - before;
            assertTrue(registered <= 4 * chunksPerQueue, "never past the queue depths: " + registered + " regions");
        }
        assertTrue(registered > 2 + chunksPerQueue, "send slots and receives grew: " + registered + " regions");
        kit.close(pair);
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void messagesKeptInPlaceThatCameBeforeConnectedStillLeaveTheirPeerAReceive() {
        // one end hears ESTABLISHED late: the other's Sends arrive before its handler has
        // Connected, when no poll grows its receives; each is kept in place, and the second needs
        // a receive grown for the first
        Connections.assumeFaultInjection(kit); // the late ESTABLISHED is the soft fabric's fault injector's
        RdmaProtocol.ConnectionOptions inPlace = RdmaProtocol.ConnectionOptions.none().withReceiveInPlace(16);
        RdmaTestKit.Listener listener = kit.listen(4, inPlace);
        kit.delayNextCmEvent(CmEventType.ESTABLISHED, Duration.ofMillis(500));
        TestProbe<RdmaProtocol.ConnectionEvent> client = kit.probe();
        kit.manager().tell(RdmaProtocol.Connect.to(listener.address(), client.getRef()).withOptions(inPlace));
        TestProbe<RdmaProtocol.ConnectionEvent> server = kit.probe();
        listener.events().expectMessageClass(RdmaProtocol.ConnectionRequested.class, WAIT).connection()
                .tell(new RdmaProtocol.Accept(server.getRef(), null));
        Early early = firstConnected(client, server);
        TestProbe<RdmaProtocol.ConnectionEvent> late = early.probe() == client ? server : client;
        RdmaProtocol.Connected sender = early.connected();
        for (int n = 1; n <= 2; n++) {
            sender.connection().tell(RdmaProtocol.Send.of(new byte[64], n));
        }
        RdmaProtocol.Connected receiver = late.expectMessageClass(RdmaProtocol.Connected.class, WAIT);
        RdmaProtocol.Received first = late.expectMessageClass(RdmaProtocol.Received.class, WAIT);
        RdmaProtocol.Received second = late.expectMessageClass(RdmaProtocol.Received.class, WAIT);
        assertTrue(first.releasable() && second.releasable(), "both kept in place");
        receiver.connection().tell(new RdmaProtocol.Release(first));
        receiver.connection().tell(new RdmaProtocol.Release(second));
        sender.connection().tell(new RdmaProtocol.Close());
        RdmaTestKit.awaitDisconnected(late);
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    private record Early(TestProbe<RdmaProtocol.ConnectionEvent> probe, RdmaProtocol.Connected connected) {
    }

    /** The end that hears Connected first, and its Connected. */
    private static Early firstConnected(TestProbe<RdmaProtocol.ConnectionEvent> a,
                                        TestProbe<RdmaProtocol.ConnectionEvent> b) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            for (TestProbe<RdmaProtocol.ConnectionEvent> p : List.of(a, b)) {
                try {
                    return new Early(p, (RdmaProtocol.Connected) p.receiveMessage(Duration.ofMillis(20)));
                } catch (AssertionError nothingYet) {
                    // the other end's turn
                }
            }
        }
        throw new AssertionError("neither end heard Connected");
    }

    @Test
    void closingRegistersNothingForTheReceivesItFlushes() {
        RdmaTestKit.Listener listener = kit.listen(4);
        RdmaTestKit.Pair pair = kit.connect(listener);
        long registered = kit.fabric().ledger().created(ResourceKind.MEMORY_REGION);
        kit.close(pair);
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
        assertEquals(registered, kit.fabric().ledger().created(ResourceKind.MEMORY_REGION),
                "the flushed receives of a closing connection are not traffic to grow for");
    }
}
