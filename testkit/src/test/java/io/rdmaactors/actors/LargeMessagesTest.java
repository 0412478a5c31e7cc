package io.rdmaactors.actors;

import static io.rdmaactors.actors.Connections.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaactors.actors.RdmaProtocol.ConnectionEvent;
import io.rdmaactors.testkit.RdmaTestKit;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Sends beyond the buffer size travel by rendezvous: whole, in order, acknowledged once, nothing left registered. */
class LargeMessagesTest {

    /** Small, just over a buffer, a buffer exactly, and a few MiB, interleaved. */
    private static final List<Integer> SIZES = List.of(100, 5_000, 1 << 20, 10, 4096, 4097, 3 << 20, 1, 70_000);

    private RdmaTestKit kit;

    @BeforeEach
    void start() {
        kit = RdmaTestKit.create("rdma-actors.send-queue-depth = 8\nrdma-actors.receive-queue-depth = 8\n"
                + "rdma-actors.max-message-size = 4 MiB");
    }

    @AfterEach
    void stop() {
        kit.close();
    }

    private static ByteString message(int n, int size) {
        byte[] data = new byte[size];
        for (int i = 0; i < size; i++) {
            data[i] = (byte) (n * 7 + i * 13);
        }
        return ByteString.fromArrayUnsafe(data);
    }

    /** Connects through {@code listener}, sends SIZES, checks what arrived and the acks, closes, leaves nothing. */
    private void sendAllThrough(RdmaTestKit.Listener listener) {
        RdmaTestKit.Pair pair = kit.connect(listener);
        for (int n = 0; n < SIZES.size(); n++) {
            RdmaProtocol.Send send = RdmaProtocol.Send.of(message(n, SIZES.get(n)), n);
            pair.client().tell(n % 3 == 2 ? send.withImmediate(n) : send);
        }
        for (int n = 0; n < SIZES.size(); n++) {
            RdmaProtocol.Received r = pair.serverEvents().expectMessageClass(RdmaProtocol.Received.class, WAIT);
            assertEquals(message(n, SIZES.get(n)), r.data(), "message " + n + " whole and in order");
            assertEquals(n % 3 == 2 ? Integer.valueOf(n) : null, r.immediate(), "message " + n + "'s immediate");
        }
        Set<Object> acked = new HashSet<>();
        for (int n = 0; n < SIZES.size(); n++) {
            assertTrue(acked.add(pair.clientEvents().expectMessageClass(RdmaProtocol.Acked.class, WAIT).token()));
        }
        kit.close(pair);
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void largeSendsArriveWholeAndInOrderAmongSmallOnes() {
        sendAllThrough(kit.listen(4));
    }

    @Test
    void largeSendsReachAConnectionOnASharedReceiveQueue() {
        TestProbe<RdmaProtocol.ListenerEvent> bind = kit.probe();
        kit.manager().tell(RdmaProtocol.Listen.on(kit.address(0), bind.getRef()).withSharedReceiveQueue());
        sendAllThrough(new RdmaTestKit.Listener(bind, bind.expectMessageClass(RdmaProtocol.Listening.class, WAIT)));
    }

    @Test
    void aSendBeyondTheMaximumFailsAloneAndTheConnectionGoesOn() {
        RdmaTestKit.Listener listener = kit.listen(4);
        RdmaTestKit.Pair pair = kit.connect(listener);
        RdmaProtocol.Send tooLarge = RdmaProtocol.Send.of(ByteString.fromArrayUnsafe(new byte[(4 << 20) + 1]), "big");
        pair.client().tell(tooLarge);
        RdmaProtocol.CommandFailed failed = pair.clientEvents().expectMessageClass(RdmaProtocol.CommandFailed.class,
                WAIT);
        assertEquals(tooLarge, failed.command());
        assertInstanceOf(IllegalArgumentException.class, failed.cause());
        pair.client().tell(RdmaProtocol.Send.of(message(1, 10_000), "next"));
        assertEquals(message(1, 10_000), pair.serverEvents().expectMessageClass(RdmaProtocol.Received.class, WAIT)
                .data());
        kit.close(pair);
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void abortWhileLargeSendsAreInFlightAnswersEachOnceAndLeavesNothingRegistered() {
        RdmaTestKit.Listener listener = kit.listen(4);
        RdmaTestKit.Pair pair = kit.connect(listener);
        for (int n = 0; n < 6; n++) {
            pair.client().tell(RdmaProtocol.Send.of(message(n, 2 << 20), n));
        }
        pair.client().tell(new RdmaProtocol.Abort());
        Set<Object> answered = new HashSet<>();
        while (true) {
            ConnectionEvent e = pair.clientEvents().receiveMessage(WAIT);
            if (e instanceof RdmaProtocol.Acked a) {
                assertTrue(answered.add(a.token()), "answered twice: " + a);
            } else if (e instanceof RdmaProtocol.CommandFailed f) {
                assertTrue(answered.add(((RdmaProtocol.Send) f.command()).ack()), "answered twice: " + f);
            } else {
                assertInstanceOf(RdmaProtocol.Disconnected.class, e);
                break;
            }
        }
        assertEquals(6, answered.size(), "every Send answered before Disconnected");
        RdmaTestKit.awaitDisconnected(pair.serverEvents());
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void theReservedImmediateIsRefusedAtConstruction() {
        assertThrows(IllegalArgumentException.class,
                () -> RdmaProtocol.Send.of(ByteString.fromString("x")).withImmediate(RdmaProtocol.RESERVED_IMMEDIATE));
        assertThrows(IllegalArgumentException.class, () -> RdmaProtocol.Write.of(new RemoteRegion(0, 8, 1), 0,
                new byte[1], null).withImmediate(RdmaProtocol.RESERVED_IMMEDIATE));
    }
}
