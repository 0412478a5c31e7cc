package io.rdmaactors.actors;

import io.rdmaactors.verbs.CompletionChannel;
import io.rdmaactors.verbs.CompletionQueue;
import io.rdmaactors.verbs.WorkCompletion;
import java.util.Arrays;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;

/**
 * Owns a CQ, its completion channel and the pump that waits on it ({@link CompletionNotifier}), and
 * hands every completion to the QP actor it feeds. That QP actor is its child, so the QP is
 * destroyed before the CQ, as rdma-core requires.
 */
final class CompletionQueueActor extends AbstractBehavior<CompletionQueueActor.Command> {

    interface Command {
    }

    /** Polls what is left and then tells the QP actor it has seen every completion. */
    record Drain() implements Command {
    }

    private record Notified() implements Command {
    }

    private record ChannelFailed(Throwable cause) implements Command {
    }

    private final CompletionQueue cq;
    private final CompletionChannel channel;
    private final CompletionNotifier notifier;
    private final ActorRef<QueuePairActor.Command> consumer;
    private final WorkCompletion[] batch = new WorkCompletion[32];

    static Behavior<Command> create(CompletionQueue cq, CompletionChannel channel,
                                    Behavior<QueuePairActor.Command> consumer,
                                    ActorRef<RdmaProtocol.ConnectionCommand> connection) {
        return Behaviors.setup(ctx -> new CompletionQueueActor(ctx, cq, channel, consumer, connection));
    }

    private CompletionQueueActor(ActorContext<Command> ctx, CompletionQueue cq, CompletionChannel channel,
                                 Behavior<QueuePairActor.Command> consumerBehavior,
                                 ActorRef<RdmaProtocol.ConnectionCommand> connection) {
        super(ctx);
        this.cq = cq;
        this.channel = channel;
        this.consumer = ctx.spawn(consumerBehavior, "qp");
        connection.tell(new ConnectionActor.QueuePairStarted(consumer));
        this.notifier = new CompletionNotifier("rdma-cq-" + cq.handle(), cq, channel, ctx.getSelf(), new Notified(),
                ChannelFailed::new);
        pollAll();
    }

    @Override
    public Receive<Command> createReceive() {
        return newReceiveBuilder()
                .onMessage(Notified.class, n -> {
                    notifier.rearm();
                    pollAll();
                    return this;
                })
                .onMessage(Drain.class, d -> {
                    pollAll();
                    consumer.tell(new QueuePairActor.Drained());
                    return this;
                })
                .onMessage(ChannelFailed.class, f -> {
                    throw new IllegalStateException("the completion channel failed", f.cause());
                })
                .onSignal(PostStop.class, s -> {
                    notifier.close();
                    cq.close();
                    channel.close();
                    return this;
                })
                .build();
    }

    private void pollAll() {
        int n;
        while ((n = cq.poll(batch)) > 0) {
            consumer.tell(new QueuePairActor.Completions(Arrays.copyOf(batch, n)));
        }
    }
}
