package io.rdmaactors.actors;

import io.rdmaactors.verbs.CompletionChannel;
import io.rdmaactors.verbs.CompletionQueue;
import java.util.function.BiFunction;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;

/**
 * Owns a connection's CQ and its completion channel. The QP actor, its child, is the CQ's only
 * consumer: it waits on the channel and polls (one hop less per completion than polling here), and
 * being a child it is gone, with its QP and pump, before this actor destroys CQ and channel, in
 * the order rdma-core requires.
 */
final class CompletionQueueActor extends AbstractBehavior<CompletionQueueActor.Command> {

    interface Command {
    }

    private final CompletionQueue cq;
    private final CompletionChannel channel;

    /**
     * @param consumer the QP actor's behavior, given this CQ and its channel
     */
    static Behavior<Command> create(CompletionQueue cq, CompletionChannel channel,
                                    BiFunction<CompletionQueue, CompletionChannel, Behavior<QueuePairActor.Command>> consumer,
                                    ActorRef<RdmaProtocol.ConnectionCommand> connection) {
        return Behaviors.setup(ctx -> new CompletionQueueActor(ctx, cq, channel, consumer, connection));
    }

    private CompletionQueueActor(ActorContext<Command> ctx, CompletionQueue cq, CompletionChannel channel,
                                 BiFunction<CompletionQueue, CompletionChannel, Behavior<QueuePairActor.Command>> consumer,
                                 ActorRef<RdmaProtocol.ConnectionCommand> connection) {
        super(ctx);
        this.cq = cq;
        this.channel = channel;
        connection.tell(new ConnectionActor.QueuePairStarted(ctx.spawn(consumer.apply(cq, channel), "qp")));
    }

    @Override
    public Receive<Command> createReceive() {
        return newReceiveBuilder()
                .onSignal(PostStop.class, s -> {
                    cq.close();
                    channel.close();
                    return this;
                })
                .build();
    }
}
