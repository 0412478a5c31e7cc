package io.rdmaactors.actors;

import io.rdmaactors.cm.EventPump;
import io.rdmaactors.cm.EventSource;
import io.rdmaactors.verbs.CompletionChannel;
import io.rdmaactors.verbs.CompletionQueue;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * The completion channel loop of the actor that owns a CQ, without lost wake-ups: a pump waits on
 * the channel and tells the actor; the actor calls {@link #rearm()} before it polls, so a completion
 * that lands during the poll fires the next event. Channel events are acked in batches (the ack
 * takes a mutex), and every one the pump took is acked before the CQ may be destroyed.
 */
final class CompletionNotifier implements AutoCloseable {

    private static final int ACK_BATCH = 16;

    private final CompletionQueue cq;
    private final EventPump<Object> pump;
    private final AtomicInteger received = new AtomicInteger();
    private int acked;

    @SuppressWarnings("unchecked")
    <T> CompletionNotifier(String name, CompletionQueue cq, CompletionChannel channel, ActorRef<T> owner, T notified,
                           Function<Throwable, T> failed) {
        this.cq = cq;
        EventSource<Object> source = new EventSource<>() {
            @Override
            public Object await(Duration timeout) throws Exception {
                if (channel.await(timeout) == null) {
                    return null;
                }
                received.incrementAndGet();
                return notified;
            }

            @Override
            public void wakeup() {
                channel.wakeup();
            }
        };
        this.pump = EventPump.start(name, source, e -> owner.tell((T) e), failed::apply);
        cq.requestNotify(false);
    }

    /** Acks what is due and arms the CQ for the next completion; poll after this. */
    void rearm() {
        ack(ACK_BATCH);
        cq.requestNotify(false);
    }

    private void ack(int batch) {
        int pending = received.get() - acked;
        if (pending >= batch) {
            cq.ackEvents(pending);
            acked += pending;
        }
    }

    /** Stops the pump and acks every event it took; the CQ can be destroyed after this. */
    @Override
    public void close() {
        pump.close();
        ack(1);
    }
}
