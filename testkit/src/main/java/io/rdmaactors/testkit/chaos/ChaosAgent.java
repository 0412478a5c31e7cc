package io.rdmaactors.testkit.chaos;

import io.rdmaactors.actors.RdmaProtocol;
import io.rdmaactors.verbs.Access;
import java.nio.ByteBuffer;
import java.util.Set;
import java.util.function.Consumer;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/**
 * The server's side of one chaos connection: exports a region for the client's Writes, Reads and
 * atomics (offered in the Accept's private data), then echoes every Send.
 */
final class ChaosAgent {

    /** The region: an 8-byte counter for FetchAdd, then a slot for Write and Read. */
    static final int COUNTER = 0;
    static final int SLOT = 64;
    static final int SLOT_BYTES = 1024;

    private ChaosAgent() {
    }

    /** @param connected told each Connected of this side, for faults on the server's end; null once it ended */
    static Behavior<Object> create(ActorRef<RdmaProtocol.ConnectionCommand> connection,
                                   Consumer<RdmaProtocol.Connected> connected) {
        return Behaviors.setup(ctx -> {
            ActorRef<RdmaProtocol.ConnectionEvent> self = ctx.getSelf().narrow();
            ActorRef<RdmaProtocol.ExportReply> exported = ctx.getSelf().narrow();
            connection.tell(new RdmaProtocol.Export(ByteBuffer.allocateDirect(SLOT + SLOT_BYTES),
                    Set.of(Access.REMOTE_READ, Access.REMOTE_WRITE, Access.REMOTE_ATOMIC), exported));
            return Behaviors.receive(Object.class)
                    .onMessage(RdmaProtocol.Exported.class, e -> {
                        connection.tell(new RdmaProtocol.Accept(self, e.region().toBytes()));
                        return Behaviors.same();
                    })
                    .onMessage(RdmaProtocol.Connected.class, c -> {
                        connected.accept(c);
                        return Behaviors.same();
                    })
                    .onMessage(RdmaProtocol.Received.class, r -> {
                        connection.tell(RdmaProtocol.Send.of(r.data()));
                        return Behaviors.same();
                    })
                    .onMessage(RdmaProtocol.Disconnected.class, d -> {
                        connected.accept(null);
                        return Behaviors.stopped();
                    })
                    .onMessage(RdmaProtocol.CommandFailed.class, f -> {
                        if (f.command() instanceof RdmaProtocol.Export) {
                            return Behaviors.stopped(); // the request went away before it was accepted
                        }
                        return Behaviors.same(); // an echo the dying connection refused
                    })
                    .onAnyMessage(other -> Behaviors.same())
                    .build();
        });
    }
}
