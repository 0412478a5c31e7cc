package io.rdmaactors.actors;

import static io.rdmaactors.actors.Connections.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaactors.testkit.RdmaTestKit;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.Test;

/** The actor system's shutdown ends connections while their handlers still live, closing them first. */
class ShutdownTest {

    @Test
    void aSystemShutdownTellsEachLiveHandlerItsConnectionEnded() throws Exception {
        RdmaTestKit kit = RdmaTestKit.create();
        RdmaTestKit.Listener listener = kit.listen(8);
        RdmaTestKit.Pair pair = kit.connect(listener);
        // a handler of the user's (under /user, which the guardian stops before /system)
        CompletableFuture<RdmaProtocol.Disconnected> heard = new CompletableFuture<>();
        ActorRef<RdmaProtocol.ConnectionEvent> handler = kit.testKit().spawn(hearing(heard));
        pair.client().tell(new RdmaProtocol.Register(handler));
        // the Register is in effect once a command's answer reaches the new handler's side
        pair.client().tell(RdmaProtocol.Send.of(new byte[] {1}, "registered")
                .withReplyTo(pair.clientEvents().ref()));
        assertEquals("registered", pair.clientEvents().expectMessageClass(RdmaProtocol.Acked.class, WAIT).token());

        kit.close();

        // before: the handler stopped first, the connection closed on its death and told nobody
        RdmaProtocol.DisconnectReason reason = heard.get(WAIT.toMillis(), TimeUnit.MILLISECONDS).reason();
        RdmaProtocol.ErrorClosed closed = assertInstanceOf(RdmaProtocol.ErrorClosed.class, reason);
        assertInstanceOf(RdmaProtocol.ConnectionClosed.class, closed.cause());
    }

    /**
     * A system that shuts down quiesces its open connections first, as Close does: what was sent
     * before arrives, and the peer, in a system that stays, hears a close, not a failure (as a TCP
     * peer gets the FIN of a process that exits).
     */
    @Test
    void aSystemShutdownClosesItsConnectionsSoTheirPeersHearAClose() throws Exception {
        RdmaTestKit staying = RdmaTestKit.create();
        try {
            RdmaTestKit leaving = RdmaTestKit.create();
            RdmaTestKit.Listener listener = staying.listen(8);
            TestProbe<RdmaProtocol.ConnectionEvent> clientEvents = leaving.probe();
            leaving.manager().tell(RdmaProtocol.Connect.to(listener.listening().localAddress(), clientEvents.getRef())
                    .withTimeout(WAIT));
            TestProbe<RdmaProtocol.ConnectionEvent> serverEvents = staying.probe();
            listener.events().expectMessageClass(RdmaProtocol.ConnectionRequested.class, WAIT).connection()
                    .tell(new RdmaProtocol.Accept(serverEvents.getRef(), null));
            ActorRef<RdmaProtocol.ConnectionCommand> client = clientEvents
                    .expectMessageClass(RdmaProtocol.Connected.class, WAIT).connection();
            serverEvents.expectMessageClass(RdmaProtocol.Connected.class, WAIT);
            client.tell(RdmaProtocol.Send.of(ByteString.fromString("the last word"), null));

            leaving.close();

            assertEquals("the last word", serverEvents.expectMessageClass(RdmaProtocol.Received.class, WAIT)
                    .data().utf8String());
            assertInstanceOf(RdmaProtocol.PeerClosed.class,
                    RdmaTestKit.awaitDisconnected(serverEvents).reason());
            RdmaProtocol.ErrorClosed stopped = assertInstanceOf(RdmaProtocol.ErrorClosed.class,
                    RdmaTestKit.awaitDisconnected(clientEvents).reason());
            assertInstanceOf(RdmaProtocol.ConnectionClosed.class, stopped.cause());
            staying.unbind(listener);
            staying.awaitNoLeaks(WAIT);
        } finally {
            staying.close();
        }
    }

    /**
     * Handlers that cannot run while the connections end (their dispatcher's one thread busy) still
     * take their Disconnected before the guardian stops them: a stop is handled before the
     * messages already queued. One handler is an actor, the other a message adapter of one.
     */
    @Test
    void aHandlerTooBusyToRunWhileTheSystemShutsDownStillHearsItsConnectionEnded() throws Exception {
        RdmaTestKit kit = RdmaTestKit.create("""
                busy { type = Dispatcher, executor = thread-pool-executor, thread-pool-executor.fixed-pool-size = 1 }
                """);
        RdmaTestKit.Listener listener = kit.listen(8);
        RdmaTestKit.Pair pair = kit.connect(listener);
        DispatcherSelector busy = DispatcherSelector.fromConfig("busy");
        CompletableFuture<RdmaProtocol.Disconnected> actorHeard = new CompletableFuture<>();
        ActorRef<RdmaProtocol.ConnectionEvent> actor = kit.testKit().spawn(hearing(actorHeard), "actor", busy);
        CompletableFuture<RdmaProtocol.Disconnected> adapterHeard = new CompletableFuture<>();
        CompletableFuture<ActorRef<RdmaProtocol.ConnectionEvent>> adapterOfOwner = new CompletableFuture<>();
        kit.testKit().spawn(Behaviors.setup(ctx -> {
            adapterOfOwner.complete(ctx.messageAdapter(RdmaProtocol.ConnectionEvent.class, e -> e));
            return Behaviors.receive(Object.class)
                    .onMessage(RdmaProtocol.Disconnected.class, d -> {
                        adapterHeard.complete(d);
                        return Behaviors.same();
                    })
                    .build();
        }), "owner", busy);
        ActorRef<RdmaProtocol.ConnectionEvent> adapter = adapterOfOwner.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        pair.client().tell(new RdmaProtocol.Register(actor));
        pair.server().tell(new RdmaProtocol.Register(adapter));
        pair.client().tell(RdmaProtocol.Send.of(new byte[] {1}, "registered").withReplyTo(pair.clientEvents().ref()));
        pair.server().tell(RdmaProtocol.Send.of(new byte[] {1}, "registered").withReplyTo(pair.serverEvents().ref()));
        assertEquals("registered", pair.clientEvents().expectMessageClass(RdmaProtocol.Acked.class, WAIT).token());
        assertEquals("registered", pair.serverEvents().expectMessageClass(RdmaProtocol.Acked.class, WAIT).token());
        // the dispatcher's one thread sleeps through the connections' end
        kit.testKit().spawn(Behaviors.setup(ctx -> {
            Thread.sleep(2_000);
            return Behaviors.empty();
        }), "sleeper", busy);

        kit.close();

        assertInstanceOf(RdmaProtocol.ErrorClosed.class, actorHeard.get(WAIT.toMillis(), TimeUnit.MILLISECONDS).reason());
        assertInstanceOf(RdmaProtocol.ErrorClosed.class, adapterHeard.get(WAIT.toMillis(), TimeUnit.MILLISECONDS).reason());
    }

    /**
     * The shutdown waits for each handler it told: on two cores or fewer, a callback on a future
     * converted from Scala would start a thread per handler (at 10,000 connections 2.4-2.6 s of the
     * phase's 5). Where the common pool has threads of its own this cannot fail; CI's two cores are
     * where it can.
     */
    @Test
    void aShutdownStartsNoThreadPerConnection() {
        int connections = 20;
        RdmaTestKit kit = RdmaTestKit.create();
        RdmaTestKit.Listener listener = kit.listen(connections);
        for (int i = 0; i < connections; i++) {
            kit.connect(listener);
        }
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long started = threads.getTotalStartedThreadCount();

        kit.close();

        long startedByShutdown = threads.getTotalStartedThreadCount() - started;
        // before: more than two per connection, one per handler told
        assertTrue(startedByShutdown < connections,
                startedByShutdown + " threads started while " + connections + " connections shut down");
    }

    /**
     * A handler that is {@code system.ignoreRef()} answers nothing: the shutdown does not wait for
     * it. The phase's timeout is longer than this test waits, so a wait for it fails the test.
     */
    @Test
    void aShutdownDoesNotWaitForAHandlerThatIgnoresEverything() throws Exception {
        RdmaTestKit kit = RdmaTestKit.create("""
                pekko.coordinated-shutdown.phases.before-actor-system-terminate.timeout = 120 s
                pekko.actor.testkit.typed.system-shutdown-default = 150 s
                """);
        RdmaTestKit.Listener listener = kit.listen(8);
        RdmaTestKit.Pair pair = kit.connect(listener);
        pair.client().tell(new RdmaProtocol.Register(kit.testKit().system().ignoreRef()));
        pair.client().tell(RdmaProtocol.Send.of(new byte[] {1}, "registered")
                .withReplyTo(pair.clientEvents().ref()));
        assertEquals("registered", pair.clientEvents().expectMessageClass(RdmaProtocol.Acked.class, WAIT).token());

        CompletableFuture<Void> closed = CompletableFuture.runAsync(kit::close);

        // before: the shutdown asked the ignore ref for an Identify and waited out the phase
        closed.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
    }

    private static Behavior<RdmaProtocol.ConnectionEvent> hearing(CompletableFuture<RdmaProtocol.Disconnected> heard) {
        return Behaviors.receiveMessage(e -> {
            if (e instanceof RdmaProtocol.Disconnected d) {
                heard.complete(d);
            }
            return Behaviors.same();
        });
    }
}
