package io.rdmaactors.actors;

import io.rdmaactors.cm.EventPump;
import io.rdmaactors.verbs.CompletionChannel;
import io.rdmaactors.verbs.CompletionQueue;
import io.rdmaactors.verbs.WorkCompletion;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;

/**
 * Owns a CQ, its completion channel and the pump that waits on it. On each notification it re-arms
 * before polling, so no completion slips between the last poll and the next event, then polls until
 * empty and acks events in batches (the ack takes a mutex). The QP actor it feeds is its child, so
 * the QP is destroyed before the CQ, as rdma-core requires.
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

    private static final int ACK_BATCH = 16;

    private final CompletionQueue cq;
    private final CompletionChannel channel;
    private final EventPump<Command> pump;
    private final ActorRef<QueuePairActor.Command> consumer;
    private final WorkCompletion[] batch = new WorkCompletion[32];
    /** Channel events the pump took; each must be acked before the CQ can be destroyed. */
    private final AtomicInteger received = new AtomicInteger();
    private int acked;

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
        ActorRef<Command> self = ctx.getSelf();
        this.pump = EventPump.start("rdma-cq-" + cq.handle(), source(), self::tell, ChannelFailed::new);
        cq.requestNotify(false);
        pollAll();
    }

    /** The channel seen as a source of {@link Notified}, so the pump speaks this actor's protocol. */
    private io.rdmaactors.cm.EventSource<Command> source() {
        return new io.rdmaactors.cm.EventSource<>() {
            @Override
            public Command await(java.time.Duration timeout) throws Exception {
                if (channel.await(timeout) == null) {
                    return null;
                }
                received.incrementAndGet();
                return new Notified();
            }

            @Override
            public void wakeup() {
                channel.wakeup();
            }
        };
    }

    @Override
    public Receive<Command> createReceive() {
        return newReceiveBuilder()
                .onMessage(Notified.class, n -> {
                    ackEvents(ACK_BATCH);
                    cq.requestNotify(false);
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
                    pump.close();
                    ackEvents(1);
                    cq.close();
                    channel.close();
                    return this;
                })
                .build();
    }

    /** Acks what the pump took once at least {@code batch} events are pending. */
    private void ackEvents(int batch) {
        int pending = received.get() - acked;
        if (pending >= batch) {
            cq.ackEvents(pending);
            acked += pending;
        }
    }

    private void pollAll() {
        int n;
        while ((n = cq.poll(batch)) > 0) {
            consumer.tell(new QueuePairActor.Completions(Arrays.copyOf(batch, n)));
        }
    }
}
