package io.rdmaactors.actors;

import io.rdmaactors.verbs.CmId;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;

/**
 * Owns a connection's CQ (through its completion poller subscription), and frees the QP and
 * its buffers with it. The QP actor, its child, is the
 * CQ's only consumer (one hop less per completion than polling here), and being a child it has
 * stopped, its completion subscription closed, before this actor destroys the QP and then hands
 * the CQ to its poller to destroy, in the order rdma-core requires. It runs on the verbs dispatcher: destroying is slow.
 */
final class CompletionQueueActor extends AbstractBehavior<CompletionQueueActor.Command> {

    interface Command {
    }

    private final CompletionPoller.Subscription completions;
    private final CmId id;
    private final QueuePairActor.Buffers buffers;

    /**
     * @param consumer the QP actor's behavior, spawned on {@code dataPath}
     */
    static Behavior<Command> create(CmId id, CompletionPoller.Subscription completions, QueuePairActor.Buffers buffers,
                                    Behavior<RdmaProtocol.ConnectionCommand> consumer, Props dataPath,
                                    ActorRef<RdmaProtocol.ConnectionCommand> connection) {
        return Behaviors.setup(ctx -> new CompletionQueueActor(ctx, id, completions, buffers, consumer, dataPath,
                connection));
    }

    private CompletionQueueActor(ActorContext<Command> ctx, CmId id, CompletionPoller.Subscription completions,
                                 QueuePairActor.Buffers buffers, Behavior<RdmaProtocol.ConnectionCommand> consumer,
                                 Props dataPath, ActorRef<RdmaProtocol.ConnectionCommand> connection) {
        super(ctx);
        this.completions = completions;
        this.id = id;
        this.buffers = buffers;
        connection.tell(new ConnectionActor.QueuePairStarted(ctx.spawn(consumer, "qp", dataPath)));
    }

    @Override
    public Receive<Command> createReceive() {
        return newReceiveBuilder()
                .onSignal(PostStop.class, s -> {
                    id.destroyQueuePair();
                    completions.close();
                    buffers.close();
                    return this;
                })
                .build();
    }
}
