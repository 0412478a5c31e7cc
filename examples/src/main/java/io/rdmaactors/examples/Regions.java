package io.rdmaactors.examples;

import io.rdmaactors.actors.RdmaProtocol;
import io.rdmaactors.verbs.Access;
import java.nio.ByteBuffer;
import java.util.Set;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/** Exporting memory to a peer: the region travels as the connection's next message, as rping sends its buffer. */
final class Regions {

    private Regions() {
    }

    /**
     * Exports {@code memory} on {@code connection} with {@code rights} and sends the region's 20-byte
     * encoding. The Export's answer goes to a one-shot child, so the handler keeps its own protocol;
     * a refused export is logged there (the connection is then closing, and its handler hears why).
     */
    static void exportAndSend(ActorContext<?> ctx, ActorRef<RdmaProtocol.ConnectionCommand> connection,
                              ByteBuffer memory, Set<Access> rights) {
        ActorRef<RdmaProtocol.ExportReply> sendRegion = ctx.spawnAnonymous(Behaviors.setup(child ->
                Behaviors.receive(RdmaProtocol.ExportReply.class)
                        .onMessage(RdmaProtocol.Exported.class, e -> {
                            connection.tell(RdmaProtocol.Send.of(e.region().toBytes(), null));
                            return Behaviors.stopped();
                        })
                        .onMessage(RdmaProtocol.CommandFailed.class, f -> {
                            child.getLog().warn("export refused: {}", f.cause().getMessage());
                            return Behaviors.stopped();
                        })
                        .build()));
        connection.tell(new RdmaProtocol.Export(memory, rights, sendRegion));
    }
}
