package io.rdmaactors.actors;

import static io.rdmaactors.actors.Connections.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.rdmaactors.testkit.RdmaTestKit;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorRef;
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
        ActorRef<RdmaProtocol.ConnectionEvent> handler = kit.testKit().spawn(
                Behaviors.receiveMessage((RdmaProtocol.ConnectionEvent e) -> {
                    if (e instanceof RdmaProtocol.Disconnected d) {
                        heard.complete(d);
                    }
                    return Behaviors.same();
                }));
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
}
