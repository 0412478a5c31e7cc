package io.rdmaactors.actors;

import static io.rdmaactors.actors.Connections.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaactors.actors.RdmaProtocol.ConnectionOptions;
import io.rdmaactors.testkit.RdmaTestKit;
import io.rdmaactors.verbs.QpInitAttributes;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A connection's own settings, given with its Connect or its listener's Listen, win over the system's. */
class ConnectionOptionsTest {

    private RdmaTestKit kit;

    @BeforeEach
    void start() {
        kit = RdmaTestKit.create();
    }

    @AfterEach
    void stop() {
        kit.close();
    }

    /** A pair whose server end was accepted by a listener with {@code listen}, its client connected with {@code connect}. */
    private record Pair(RdmaProtocol.Listening listening, RdmaProtocol.Connected client,
                        TestProbe<RdmaProtocol.ConnectionEvent> clientEvents, RdmaProtocol.Connected server,
                        TestProbe<RdmaProtocol.ConnectionEvent> serverEvents) {
    }

    private Pair connect(ConnectionOptions listen, ConnectionOptions connect) {
        TestProbe<RdmaProtocol.ListenerEvent> listenerEvents = kit.probe();
        kit.manager().tell(RdmaProtocol.Listen.on(kit.address(0), listenerEvents.getRef()).withOptions(listen));
        RdmaProtocol.Listening listening = listenerEvents.expectMessageClass(RdmaProtocol.Listening.class, WAIT);
        TestProbe<RdmaProtocol.ConnectionEvent> clientEvents = kit.probe();
        kit.manager().tell(RdmaProtocol.Connect.to(listening.localAddress(), clientEvents.getRef()).withOptions(connect));
        RdmaProtocol.ConnectionRequested request = listenerEvents.expectMessageClass(
                RdmaProtocol.ConnectionRequested.class, WAIT);
        TestProbe<RdmaProtocol.ConnectionEvent> serverEvents = kit.probe();
        request.connection().tell(new RdmaProtocol.Accept(serverEvents.getRef(), null));
        return new Pair(listening, clientEvents.expectMessageClass(RdmaProtocol.Connected.class, WAIT), clientEvents,
                serverEvents.expectMessageClass(RdmaProtocol.Connected.class, WAIT), serverEvents);
    }

    private void close(Pair pair) {
        pair.client().connection().tell(new RdmaProtocol.Close());
        RdmaTestKit.awaitDisconnected(pair.clientEvents());
        RdmaTestKit.awaitDisconnected(pair.serverEvents());
        pair.listening().listener().tell(new RdmaProtocol.Unbind());
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void eachEndsQueuePairIsBuiltWithTheDepthsItWasGiven() {
        Connections.assumeFaultInjection(kit); // the soft fabric shows the QPs it built
        Pair pair = connect(ConnectionOptions.none().withSendQueueDepth(6),
                ConnectionOptions.none().withSendQueueDepth(8).withReceiveQueueDepth(24));
        QpInitAttributes client = kit.queuePair(pair.client()).initAttributes();
        assertEquals(8, client.maxSendWr());
        assertEquals(24, client.maxRecvWr());
        QpInitAttributes server = kit.queuePair(pair.server()).initAttributes();
        assertEquals(6, server.maxSendWr());
        assertEquals(kit.testKit().system().settings().config().getInt("rdma-actors.receive-queue-depth"),
                server.maxRecvWr(), "what the options leave alone is the system's");
        close(pair);
    }

    @Test
    void aConnectionsOwnLargestMessageWinsOverTheSystems() {
        Pair pair = connect(ConnectionOptions.none().withMaxMessageSize(100), ConnectionOptions.none());
        // the server's connections take at most 100 bytes; the client's the system's 16 MiB
        RdmaProtocol.Send tooLarge = RdmaProtocol.Send.of(new byte[101], "too large");
        pair.server().connection().tell(tooLarge);
        RdmaProtocol.CommandFailed refused = pair.serverEvents().expectMessageClass(RdmaProtocol.CommandFailed.class,
                WAIT);
        assertSame(tooLarge, refused.command());
        assertInstanceOf(IllegalArgumentException.class, refused.cause());
        pair.client().connection().tell(RdmaProtocol.Send.of(new byte[101], "fits"));
        assertEquals("fits", pair.clientEvents().expectMessageClass(RdmaProtocol.Acked.class, WAIT).token());
        assertEquals(101, pair.serverEvents().expectMessageClass(RdmaProtocol.Received.class, WAIT).data().size());
        close(pair);
    }

    @Test
    void aBadOptionIsRefusedAtConstructionNamingIt() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> ConnectionOptions.none().withMaxMessageSize(0))
                .getMessage().contains("maxMessageSize"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> ConnectionOptions.none().withSendQueueDepth(0))
                .getMessage().contains("sendQueueDepth"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> ConnectionOptions.none().withWriteQueue(-1))
                .getMessage().contains("writeQueue"));
    }
}
