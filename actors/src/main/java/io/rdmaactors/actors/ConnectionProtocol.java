package io.rdmaactors.actors;

import io.rdmaactors.actors.RdmaProtocol.ConnectionCommand;
import io.rdmaactors.cm.AsyncEvent;
import io.rdmaactors.cm.CmEvent;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.MemoryWindow;
import io.rdmaactors.verbs.QpAttributes;
import org.apache.pekko.actor.DeadLetterSuppression;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * What the actors of one connection and those that route to it tell each other, as
 * {@link RdmaProtocol} is what users tell them: the connection actor's messages from its QP, CQ,
 * device and CM event actors, and the QP actor's from its connection actor. Each actor keeps
 * its own timers and self-messages private.
 */
final class ConnectionProtocol {

    private ConnectionProtocol() {
    }

    /**
     * What the library's own actors tell a connection or its QP actor; everything else is the
     * handler's command. One that races the connection's stop (a CM event, a completion
     * notification) is expected, so it is not a dead letter worth logging.
     */
    interface Internal extends ConnectionCommand, DeadLetterSuppression {
    }

    /** A CM event for this connection's id. */
    record Cm(CmEvent event) implements Internal {
    }

    /** An async event for this connection's QP or device. */
    record Async(AsyncEvent event) implements Internal {
    }

    /**
     * The QP actor answered everything outstanding; {@code failure}: its first error completion, or
     * null; {@code peerClosing}: the peer said it closes before it disconnected.
     */
    record QueuePairDrained(RdmaProtocol.WorkRequestFailed failure, boolean peerClosing) implements Internal {
    }

    /** Everything sent before a graceful close has completed. */
    record QueuePairQuiesced() implements Internal {
    }

    /** A work request failed: the QP is in ERR and the connection is over. */
    record QueuePairFailed(Throwable cause) implements Internal {
    }

    /** The CQ actor started the QP actor, which the handler's Connected names. */
    record QueuePairStarted(ActorRef<ConnectionCommand> qp) implements Internal {
    }

    /** The CQ actor destroyed the QP and CQ and freed the buffers, at {@link CompletionQueueActor.Release}. */
    record QueuePairReleased() implements Internal {
    }

    /**
     * The actor system shuts down: an open connection quiesces as Close does, and the stop that
     * follows tears it down (its handler hears that rdma-actors stopped); {@code replyTo} hears once
     * it quiesced or ended, or at once if it was not open.
     */
    record CloseAtShutdown(ActorRef<CmEventActor.Command> replyTo) implements Internal {
    }

    // ------------------------------------------------------------------ to the QP actor

    /** What the connection actor tells its QP actor. */
    interface QueuePairCommand extends Internal {
    }

    /** The handler was told Connected: receives may be delivered from now on. */
    record Open() implements QueuePairCommand {
    }

    record ModifyPath(Object command, QpAttributes attributes) implements QueuePairCommand {
    }

    /** The connection is closing: poll what is left, fail what is still outstanding, report back. */
    record Drain() implements QueuePairCommand {
    }

    /**
     * A graceful close: refuse new data commands; once everything sent has completed, tell the peer
     * that this side closes and report Quiesced when it has heard.
     */
    record Quiesce() implements QueuePairCommand {
    }

    /**
     * An export on a connection whose protection domain others share (a shared receive queue's): its
     * region is reached through {@code window}, bound to this connection's QP alone, and the
     * Export is answered once the bind completed.
     */
    record BindWindow(RdmaProtocol.Export export, MemoryWindow window, MemoryRegion region)
            implements QueuePairCommand {
    }
}
