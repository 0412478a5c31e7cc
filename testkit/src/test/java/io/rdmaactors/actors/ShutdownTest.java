package io.rdmaactors.actors;

import static io.rdmaactors.actors.Connections.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.rdmaactors.testkit.RdmaTestKit;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.Test;

/** The actor system's shutdown ends connections while their handlers still live. */
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

    private static Behavior<RdmaProtocol.ConnectionEvent> hearing(CompletableFuture<RdmaProtocol.Disconnected> heard) {
        return Behaviors.receiveMessage(e -> {
            if (e instanceof RdmaProtocol.Disconnected d) {
                heard.complete(d);
            }
            return Behaviors.same();
        });
    }
}
