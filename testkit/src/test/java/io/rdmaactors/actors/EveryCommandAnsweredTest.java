package io.rdmaactors.actors;

import static io.rdmaactors.actors.Connections.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaactors.actors.RdmaProtocol.ConnectionEvent;
import io.rdmaactors.testkit.RdmaTestKit;
import io.rdmaactors.verbs.Access;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Every command gets exactly one answer, whatever state its connection is in; bad commands fail at construction. */
class EveryCommandAnsweredTest {

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
    void badArgumentsFailAtConstructionNamingWhatIsWrong() {
        TestProbe<ConnectionEvent> events = kit.probe();
        InetSocketAddress somewhere = kit.address(1);
        assertTrue(assertThrows(NullPointerException.class, () -> new RdmaProtocol.Listen(somewhere, null, 1))
                .getMessage().contains("handler"));
        assertTrue(assertThrows(NullPointerException.class, () -> RdmaProtocol.Connect.to(null, events.getRef())).getMessage().contains("remote"));
        assertThrows(IllegalArgumentException.class, () -> RdmaProtocol.Connect.to(somewhere, events.getRef()).withTimeout(Duration.ZERO));
        assertThrows(NullPointerException.class, () -> new RdmaProtocol.Accept(null, null));
        assertThrows(NullPointerException.class, () -> RdmaProtocol.Send.of((byte[]) null, 1));
        assertThrows(IllegalArgumentException.class, () -> new RdmaProtocol.Read(new RemoteRegion(0, 8, 1), 0, -1,
                null));
        TestProbe<RdmaProtocol.ExportReply> exported = kit.probe();
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new RdmaProtocol.Export(ByteBuffer.allocate(8),
                Set.of(Access.REMOTE_READ), exported.getRef())).getMessage().contains("direct"));
    }

    @Test
    void aListenOnAHostThatDoesNotResolveFailsNamingIt() {
        TestProbe<RdmaProtocol.ListenerEvent> events = kit.probe();
        RdmaProtocol.Listen listen = RdmaProtocol.Listen.on(InetSocketAddress.createUnresolved("no.such.host.invalid",
                7471), events.getRef());
        kit.manager().tell(listen);
        RdmaProtocol.CommandFailed failed = events.expectMessageClass(RdmaProtocol.CommandFailed.class, WAIT);
        assertSame(listen, failed.command());
        assertInstanceOf(java.net.UnknownHostException.class, failed.cause());
        assertTrue(failed.cause().getMessage().contains("no.such.host.invalid"), failed.cause().getMessage());
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void aBadSettingNamesItsKey() {
        com.typesafe.config.Config config = com.typesafe.config.ConfigFactory.parseString("rdma-actors.buffer-size = 8")
                .withFallback(com.typesafe.config.ConfigFactory.load());
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class, () -> RdmaSettings.from(config));
        assertTrue(bad.getMessage().startsWith("rdma-actors.buffer-size = 8: "), bad.getMessage());
        IllegalArgumentException mode = assertThrows(IllegalArgumentException.class, () -> RdmaSettings.from(
                com.typesafe.config.ConfigFactory.parseString("rdma-actors.wait = fast")
                        .withFallback(com.typesafe.config.ConfigFactory.load())));
        assertTrue(mode.getMessage().startsWith("rdma-actors.wait = fast: "), mode.getMessage());
        IllegalArgumentException close = assertThrows(IllegalArgumentException.class, () -> RdmaSettings.from(
                com.typesafe.config.ConfigFactory.parseString("rdma-actors.shutdown-close-timeout = -1s")
                        .withFallback(com.typesafe.config.ConfigFactory.load())));
        assertTrue(close.getMessage().startsWith("rdma-actors.shutdown-close-timeout = PT-1S: "), close.getMessage());
    }

    @Test
    void aFailedCommandPrintsItsPayloadsSizeNotItsBytes() {
        RdmaProtocol.CommandFailed failed = new RdmaProtocol.CommandFailed(RdmaProtocol.Send.of(new byte[100], "s"),
                new RdmaProtocol.ConnectionClosed("the connection is closed"));
        assertTrue(failed.toString().contains("Send[100 bytes, ack=s]"), failed.toString());
        assertTrue(failed.toString().length() < 200, failed.toString());
    }

    @Test
    void anUnresolvableHostFailsTheConnectWithAnAddressErrorAndLeaksNothing() {
        TestProbe<ConnectionEvent> events = kit.probe();
        kit.manager().tell(RdmaProtocol.Connect.to(InetSocketAddress.createUnresolved("no.such.host.invalid", 7471), events.getRef()).withTimeout(WAIT));
        RdmaProtocol.ConnectFailed failed = events.expectMessageClass(RdmaProtocol.ConnectFailed.class, WAIT);
        assertInstanceOf(RdmaProtocol.AddressError.class, failed.reason());
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void commandsBeforeAcceptAnswerTheListenersHandler() {
        RdmaTestKit.Listener listener = kit.listen(4);
        TestProbe<ConnectionEvent> client = kit.probe();
        kit.manager().tell(RdmaProtocol.Connect.to(listener.listening().localAddress(), client.getRef()).withTimeout(WAIT));
        RdmaProtocol.ConnectionRequested request = listener.events()
                .expectMessageClass(RdmaProtocol.ConnectionRequested.class, WAIT);
        RdmaProtocol.Send early = RdmaProtocol.Send.of(new byte[] {1}, "early");
        request.connection().tell(early);
        assertSame(early, listener.events().expectMessageClass(RdmaProtocol.CommandFailed.class, WAIT).command());
        request.connection().tell(new RdmaProtocol.Close());
        assertInstanceOf(RdmaProtocol.Close.class,
                listener.events().expectMessageClass(RdmaProtocol.CommandFailed.class, WAIT).command());
        TestProbe<RdmaProtocol.RegisterMemoryReply> registered = kit.probe();
        request.connection().tell(new RdmaProtocol.RegisterMemory(ByteBuffer.allocateDirect(8), registered.getRef()));
        registered.expectMessageClass(RdmaProtocol.CommandFailed.class, WAIT);
        request.connection().tell(new RdmaProtocol.Reject(null));
        // the request is refused, so the client hears it
        assertInstanceOf(RdmaProtocol.Rejected.class,
                client.expectMessageClass(RdmaProtocol.ConnectFailed.class, WAIT).reason());
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void acceptOrRejectOfAnEstablishedConnectionIsRefused() {
        RdmaTestKit.Listener listener = kit.listen(4);
        RdmaTestKit.Pair pair = kit.connect(listener);
        TestProbe<ConnectionEvent> latecomer = kit.probe();
        RdmaProtocol.Accept again = RdmaProtocol.Accept.with(latecomer.getRef());
        pair.server().tell(again);
        RdmaProtocol.CommandFailed refused = latecomer.expectMessageClass(RdmaProtocol.CommandFailed.class, WAIT);
        assertSame(again, refused.command(), "the handler the Accept names hears that it was refused");
        // as before Connected: a second Accept reads the same whenever it comes
        assertTrue(refused.cause().getMessage().contains("accepted already"), refused.cause().getMessage());
        RdmaProtocol.Reject late = new RdmaProtocol.Reject(null);
        pair.server().tell(late);
        assertSame(late, pair.serverEvents().expectMessageClass(RdmaProtocol.CommandFailed.class, WAIT).command());
        kit.close(pair);
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    /** {@code client} connects to {@code listener}; the request its handler hears, not answered yet. */
    private RdmaProtocol.ConnectionRequested requestedBy(TestProbe<ConnectionEvent> client,
                                                         RdmaTestKit.Listener listener) {
        kit.manager().tell(RdmaProtocol.Connect.to(listener.listening().localAddress(), client.getRef()));
        return listener.events().expectMessageClass(RdmaProtocol.ConnectionRequested.class, WAIT);
    }

    @Test
    void aSecondAcceptBeforeConnectedIsRefusedToTheHandlerItNames() {
        RdmaTestKit.Listener listener = kit.listen(4);
        TestProbe<ConnectionEvent> client = kit.probe();
        RdmaProtocol.ConnectionRequested request = requestedBy(client, listener);
        TestProbe<ConnectionEvent> first = kit.probe();
        TestProbe<ConnectionEvent> second = kit.probe();
        request.connection().tell(RdmaProtocol.Accept.with(first.getRef()));
        RdmaProtocol.Accept again = RdmaProtocol.Accept.with(second.getRef());
        request.connection().tell(again);
        RdmaProtocol.CommandFailed refused = second.expectMessageClass(RdmaProtocol.CommandFailed.class, WAIT);
        assertSame(again, refused.command());
        assertTrue(refused.cause().getMessage().contains("accepted"), refused.cause().getMessage());
        assertInstanceOf(RdmaProtocol.Connected.class, first.receiveMessage(WAIT), "the first Accept's handler");
        client.expectMessageClass(RdmaProtocol.Connected.class, WAIT).connection().tell(new RdmaProtocol.Close());
        RdmaTestKit.awaitDisconnected(client);
        RdmaTestKit.awaitDisconnected(first);
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void anAcceptNamingADeadHandlerIsAnsweredToTheListenersHandler() {
        RdmaTestKit.Listener listener = kit.listen(4);
        TestProbe<ConnectionEvent> client = kit.probe();
        RdmaProtocol.ConnectionRequested request = requestedBy(client, listener);
        TestProbe<ConnectionEvent> dead = kit.probe();
        dead.stop();
        kit.probe().expectTerminated(dead.getRef(), WAIT); // dead before the command names it
        RdmaProtocol.Accept accept = RdmaProtocol.Accept.with(dead.getRef());
        request.connection().tell(accept);
        RdmaProtocol.CommandFailed refused = listener.events().expectMessageClass(RdmaProtocol.CommandFailed.class,
                WAIT);
        assertSame(accept, refused.command());
        assertInstanceOf(RdmaProtocol.ConnectionClosed.class, refused.cause());
        // no accept went out for the dead handler: the client is refused, never connected
        assertInstanceOf(RdmaProtocol.ConnectFailed.class, client.receiveMessage(WAIT));
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void aRegisterNamingADeadHandlerEndsTheConnectionAndTellsTheHandlerItReplaced() {
        RdmaTestKit.Listener listener = kit.listen(4);
        RdmaTestKit.Pair pair = kit.connect(listener);
        TestProbe<ConnectionEvent> dead = kit.probe();
        dead.stop();
        kit.probe().expectTerminated(dead.getRef(), WAIT); // dead before the command names it
        pair.client().tell(new RdmaProtocol.Register(dead.getRef()));
        RdmaProtocol.Disconnected d = RdmaTestKit.awaitDisconnected(pair.clientEvents());
        RdmaProtocol.ErrorClosed closed = assertInstanceOf(RdmaProtocol.ErrorClosed.class, d.reason());
        assertTrue(closed.cause().getMessage().contains("Register"), closed.cause().getMessage());
        RdmaTestKit.awaitDisconnected(pair.serverEvents());
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void closeAbortExportAndRegisterMemoryAfterDisconnectedAreAnswered() {
        RdmaTestKit.Listener listener = kit.listen(4);
        RdmaTestKit.Pair pair = kit.connect(listener);
        kit.close(pair);
        RdmaProtocol.Close close = new RdmaProtocol.Close();
        pair.client().tell(close);
        assertSame(close, pair.clientEvents().expectMessageClass(RdmaProtocol.CommandFailed.class, WAIT).command());
        RdmaProtocol.Abort abort = new RdmaProtocol.Abort();
        pair.client().tell(abort);
        assertSame(abort, pair.clientEvents().expectMessageClass(RdmaProtocol.CommandFailed.class, WAIT).command());
        TestProbe<RdmaProtocol.ExportReply> exported = kit.probe();
        RdmaProtocol.Export export = new RdmaProtocol.Export(ByteBuffer.allocateDirect(8), Set.of(Access.REMOTE_READ),
                exported.getRef());
        pair.server().tell(export);
        assertSame(export, exported.expectMessageClass(RdmaProtocol.CommandFailed.class, WAIT).command(),
                "the Export's reply-to hears it");
        TestProbe<RdmaProtocol.RegisterMemoryReply> registered = kit.probe();
        RdmaProtocol.RegisterMemory register = new RdmaProtocol.RegisterMemory(ByteBuffer.allocateDirect(8),
                registered.getRef());
        pair.client().tell(register);
        assertSame(register, registered.expectMessageClass(RdmaProtocol.CommandFailed.class, WAIT).command(),
                "the RegisterMemory's reply-to hears it");
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void aManagerCommandWithoutItsReplyToIsRefusedAtConstruction() {
        assertTrue(assertThrows(NullPointerException.class, () -> new RdmaProtocol.GetFabric(null)).getMessage()
                .contains("replyTo"));
    }

    @Test
    void commandsAfterDisconnectAreRefusedNotLost() {
        RdmaTestKit.Listener listener = kit.listen(4);
        RdmaTestKit.Pair pair = kit.connect(listener);
        pair.client().tell(new RdmaProtocol.Close());
        RdmaProtocol.Send late = RdmaProtocol.Send.of(new byte[] {1}, "late");
        pair.client().tell(late);
        RdmaProtocol.Close twice = new RdmaProtocol.Close();
        pair.client().tell(twice);
        // each is refused once: while closing, or from its dead letter if the close was quicker than the sender
        Set<Object> refused = new HashSet<>();
        boolean disconnected = false;
        while (refused.size() < 2 || !disconnected) {
            ConnectionEvent e = pair.clientEvents().receiveMessage(WAIT);
            if (e instanceof RdmaProtocol.Disconnected d) {
                assertInstanceOf(RdmaProtocol.Closed.class, d.reason());
                assertTrue(!disconnected, "one Disconnected");
                disconnected = true;
            } else {
                RdmaProtocol.CommandFailed f = assertInstanceOf(RdmaProtocol.CommandFailed.class, e);
                assertInstanceOf(RdmaProtocol.ConnectionClosed.class, f.cause());
                assertTrue(f.command() == late || f.command() == twice, "refused: " + f.command());
                assertTrue(refused.add(f.command()), "answered once: " + f.command());
            }
        }
        RdmaTestKit.awaitDisconnected(pair.serverEvents());
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    /** What the handler sent as Disconnected reached it is answered at once, not from a dead letter. */
    @Test
    void commandsOnTheirWayAtDisconnectedAreAnsweredWithoutADeadLetter() {
        TestProbe<org.apache.pekko.actor.DeadLetter> deadLetters = kit.probe();
        kit.testKit().system().eventStream().tell(new org.apache.pekko.actor.typed.eventstream.EventStream.Subscribe<>(
                org.apache.pekko.actor.DeadLetter.class, deadLetters.getRef()));
        RdmaTestKit.Listener listener = kit.listen(4);
        RdmaTestKit.Pair pair = kit.connect(listener);
        pair.client().tell(new RdmaProtocol.Close());
        RdmaTestKit.awaitDisconnected(pair.clientEvents());
        RdmaProtocol.Send late = RdmaProtocol.Send.of(new byte[] {1}, "late");
        pair.client().tell(late);
        RdmaProtocol.Abort abort = new RdmaProtocol.Abort();
        pair.client().tell(abort);
        assertSame(late, pair.clientEvents().expectMessageClass(RdmaProtocol.CommandFailed.class, WAIT).command());
        assertSame(abort, pair.clientEvents().expectMessageClass(RdmaProtocol.CommandFailed.class, WAIT).command());
        deadLetters.expectNoMessage(Duration.ofMillis(100));
        RdmaTestKit.awaitDisconnected(pair.serverEvents());
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    /**
     * A closed connection frees its resources before it tells Disconnected, then answers what still
     * comes at once for as long as its handler lives (past the 250 ms it once lingered).
     */
    @Test
    void aClosedConnectionAnswersWithoutADeadLetterWhileItsHandlerLives() throws InterruptedException {
        TestProbe<org.apache.pekko.actor.DeadLetter> deadLetters = kit.probe();
        kit.testKit().system().eventStream().tell(new org.apache.pekko.actor.typed.eventstream.EventStream.Subscribe<>(
                org.apache.pekko.actor.DeadLetter.class, deadLetters.getRef()));
        RdmaTestKit.Listener listener = kit.listen(4);
        RdmaTestKit.Pair pair = kit.connect(listener);
        kit.close(pair);
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
        Thread.sleep(500);
        for (int n = 0; n < 10; n++) {
            pair.client().tell(RdmaProtocol.Send.of(new byte[] {1}, n));
        }
        RdmaProtocol.Close close = new RdmaProtocol.Close();
        pair.server().tell(close);
        for (int n = 0; n < 10; n++) {
            RdmaProtocol.CommandFailed failed = pair.clientEvents().expectMessageClass(RdmaProtocol.CommandFailed.class,
                    WAIT);
            assertEquals(n, ((RdmaProtocol.Send) failed.command()).ack());
            assertInstanceOf(RdmaProtocol.ConnectionClosed.class, failed.cause());
        }
        assertSame(close, pair.serverEvents().expectMessageClass(RdmaProtocol.CommandFailed.class, WAIT).command());
        deadLetters.expectNoMessage(Duration.ofMillis(100));
    }

    /** Once its handler stopped, a closed connection stops too; what still reaches it is answered from its dead letter. */
    @Test
    void commandsToAConnectionThatStoppedAreAnsweredNotLost() {
        RdmaTestKit.Listener listener = kit.listen(4);
        RdmaTestKit.Pair pair = kit.connect(listener);
        kit.close(pair);
        kit.unbind(listener);
        pair.clientEvents().stop();
        pair.serverEvents().stop();
        TestProbe<Object> watcher = kit.probe();
        watcher.expectTerminated(pair.client(), WAIT);
        watcher.expectTerminated(pair.server(), WAIT);
        TestProbe<ConnectionEvent> answers = kit.probe();
        for (int n = 0; n < 10; n++) {
            pair.client().tell(new RdmaProtocol.Send(org.apache.pekko.util.ByteString.fromArray(new byte[] {1}), null,
                    n, answers.getRef()));
        }
        TestProbe<RdmaProtocol.ExportReply> exported = kit.probe();
        RdmaProtocol.Export export = new RdmaProtocol.Export(ByteBuffer.allocateDirect(8), Set.of(Access.REMOTE_READ),
                exported.getRef());
        pair.server().tell(export);
        for (int n = 0; n < 10; n++) {
            RdmaProtocol.CommandFailed failed = answers.expectMessageClass(RdmaProtocol.CommandFailed.class, WAIT);
            assertEquals(n, ((RdmaProtocol.Send) failed.command()).ack());
            assertInstanceOf(RdmaProtocol.ConnectionClosed.class, failed.cause());
        }
        assertSame(export, exported.expectMessageClass(RdmaProtocol.CommandFailed.class, WAIT).command());
        answers.expectNoMessage(Duration.ofMillis(200));
        kit.awaitNoLeaks(WAIT);
    }
}
