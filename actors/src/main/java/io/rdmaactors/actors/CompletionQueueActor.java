package io.rdmaactors.actors;

import io.rdmaactors.verbs.CmId;
import io.rdmaactors.verbs.MemoryWindow;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.Signal;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/**
 * Owns a connection's CQ (through its completion poller subscription), and frees the QP and
 * its buffers with it, when the connection closed (Release) or when it stops. The QP actor, its child, is the
 * CQ's only consumer (one hop less per completion than polling here), and being a child it has
 * stopped, its completion subscription closed, before this actor destroys the QP and then hands
 * the CQ to its poller to destroy, in the order rdma-core requires. It runs on the verbs dispatcher: destroying is slow.
 */
final class CompletionQueueActor extends OnMessageBehavior<CompletionQueueActor.Command> {

    interface Command {
    }

    /**
     * The QP actor drained and went quiet: free the QP, the CQ and the buffers now, while the
     * actors live on to answer late commands, and tell {@code connection} QueuePairReleased.
     */
    record Release(ActorRef<RdmaProtocol.ConnectionCommand> connection) implements Command {
    }

    private final CompletionPoller.Subscription completions;
    private final CmId id;
    private final ConnectionBuffers buffers;

    /**
     * @param consumer the QP actor's behavior, spawned on {@code dataPath}
     */
    static Behavior<Command> create(CmId id, CompletionPoller.Subscription completions, ConnectionBuffers buffers,
                                    Behavior<RdmaProtocol.ConnectionCommand> consumer, Props dataPath,
                                    ActorRef<RdmaProtocol.ConnectionCommand> connection) {
        return Behaviors.setup(ctx -> new CompletionQueueActor(ctx, id, completions, buffers, consumer, dataPath,
                connection));
    }

    private CompletionQueueActor(ActorContext<Command> ctx, CmId id, CompletionPoller.Subscription completions,
                                 ConnectionBuffers buffers, Behavior<RdmaProtocol.ConnectionCommand> consumer,
                                 Props dataPath, ActorRef<RdmaProtocol.ConnectionCommand> connection) {
        super(ctx);
        this.completions = completions;
        this.id = id;
        this.buffers = buffers;
        connection.tell(new ConnectionProtocol.QueuePairStarted(ctx.spawn(consumer, "qp", dataPath)));
    }

    @Override
    Behavior<Command> onMessage(Command m) {
        if (m instanceof Release r) {
            free();
            r.connection().tell(new ConnectionProtocol.QueuePairReleased());
            return Behaviors.ignore(); // freed: its stop frees nothing more
        }
        return Behaviors.unhandled();
    }

    @Override
    Behavior<Command> onSignal(Signal signal) {
        if (signal instanceof PostStop) {
            free();
            return this;
        }
        return super.onSignal(signal);
    }

    private void free() {
        buffers.exportWindows.forEach(MemoryWindow::close); // the connection's own close of them does nothing then
        id.destroyQueuePair();
        completions.close();
        buffers.close();
    }
}
