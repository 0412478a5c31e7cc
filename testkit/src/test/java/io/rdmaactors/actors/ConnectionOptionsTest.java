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

    @Test
    void eachEndIsBuiltWithTheOptionsItWasGiven() {
        TestProbe<RdmaProtocol.ListenerEvent> listenerEvents = kit.probe();
        kit.manager().tell(RdmaProtocol.Listen.on(kit.address(0), listenerEvents.getRef())
                .withOptions(ConnectionOptions.none().withSendQueueDepth(6).withMaxMessageSize(100)));
        RdmaProtocol.Listening listening = listenerEvents.expectMessageClass(RdmaProtocol.Listening.class, WAIT);
        TestProbe<RdmaProtocol.ConnectionEvent> clientEvents = kit.probe();
        kit.manager().tell(RdmaProtocol.Connect.to(listening.localAddress(), clientEvents.getRef())
                .withOptions(ConnectionOptions.none().withSendQueueDepth(8).withReceiveQueueDepth(24)));
        RdmaProtocol.ConnectionRequested request = listenerEvents.expectMessageClass(
                RdmaProtocol.ConnectionRequested.class, WAIT);
        TestProbe<RdmaProtocol.ConnectionEvent> serverEvents = kit.probe();
        request.connection().tell(new RdmaProtocol.Accept(serverEvents.getRef(), null));
        RdmaProtocol.Connected client = clientEvents.expectMessageClass(RdmaProtocol.Connected.class, WAIT);
        RdmaProtocol.Connected server = serverEvents.expectMessageClass(RdmaProtocol.Connected.class, WAIT);

        QpInitAttributes clientQp = kit.queuePair(client).initAttributes();
        assertEquals(8, clientQp.maxSendWr());
        assertEquals(24, clientQp.maxRecvWr());
        QpInitAttributes serverQp = kit.queuePair(server).initAttributes();
        assertEquals(6, serverQp.maxSendWr());
        assertEquals(kit.testKit().system().settings().config().getInt("rdma-actors.receive-queue-depth"),
                serverQp.maxRecvWr(), "what the options leave alone is the system's");

        // the server's connections take at most 100 bytes; the client's the system's 16 MiB
        RdmaProtocol.Send tooLarge = RdmaProtocol.Send.of(new byte[101], "too large");
        server.connection().tell(tooLarge);
        RdmaProtocol.CommandFailed refused = serverEvents.expectMessageClass(RdmaProtocol.CommandFailed.class, WAIT);
        assertSame(tooLarge, refused.command());
        assertInstanceOf(IllegalArgumentException.class, refused.cause());
        client.connection().tell(RdmaProtocol.Send.of(new byte[101], "fits"));
        assertEquals("fits", clientEvents.expectMessageClass(RdmaProtocol.Acked.class, WAIT).token());
        assertEquals(101, serverEvents.expectMessageClass(RdmaProtocol.Received.class, WAIT).data().size());

        client.connection().tell(new RdmaProtocol.Close());
        RdmaTestKit.awaitDisconnected(clientEvents);
        RdmaTestKit.awaitDisconnected(serverEvents);
        listening.listener().tell(new RdmaProtocol.Unbind());
        kit.awaitNoLeaks(WAIT);
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
