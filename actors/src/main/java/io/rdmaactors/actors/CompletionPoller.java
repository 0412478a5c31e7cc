package io.rdmaactors.actors;

import io.rdmaactors.verbs.CompletionChannel;
import io.rdmaactors.verbs.CompletionQueue;
import io.rdmaactors.verbs.Device;
import java.time.Duration;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.function.Function;
import org.apache.pekko.actor.typed.ActorRef;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The completion channels of one device and the threads that wait on them, as Pekko IO's selector
 * waits for every connection: a fixed number of channels (one thread each), each shared by many
 * CQs, whatever the number of connections. {@code ibv_get_cq_event} names the CQ that fired; its
 * owner is told, and polls on its own mailbox turn. An idle channel's thread sleeps until a
 * completion or its close: nothing wakes it periodically. It also hands out the device's spin
 * turns: how many of its CQs' owners may poll on after their completions at once.
 */
final class CompletionPoller implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(CompletionPoller.class);
    /** Long enough to be no periodic wake-up; wakeup() ends it early. */
    private static final Duration FOREVER = Duration.ofDays(1);
    /** The ack takes a mutex on rdma-core: batch it. */
    private static final int ACK_BATCH = 16;
    private static final LongAdder WAKE_UPS = new LongAdder();
    private static final AtomicInteger SPIN_TURNS_HELD = new AtomicInteger();
    /** Spin turns per device: one per two cores, so spinning connections leave half the cores to the rest. */
    static final int SPIN_TURNS = Math.max(1, Runtime.getRuntime().availableProcessors() / 2);
    /**
     * Others' answers taken on wake-ups, between two of a connection's own, that mean the device is
     * busy. Twice the spin turns: a connection's peer in the same process takes one per round trip
     * (the request it answers), so a lone ping-pong inside one JVM never reaches it.
     */
    static final int BUSY_ANSWERS = 2 * SPIN_TURNS;

    private final Waiter[] waiters;
    private final AtomicInteger next = new AtomicInteger();
    /**
     * Connections that may poll their CQs after completions (completion-spin, completion-yield) at
     * once. Polling on pays when a core would otherwise idle until the next completion comes; when
     * many connections are busy the cores have their work, and the polls only take from it (many
     * concurrent ping-pongs that all yield make far fewer round trips than ones that never poll on).
     */
    private final Semaphore spinTurns = new Semaphore(SPIN_TURNS);
    /**
     * Answers that connections not spinning took when their CQ woke them. When it grows by
     * {@link #BUSY_ANSWERS} while a connection waits, more request-response connections are busy on
     * the device than it has turns: their completions come to threads awake anyway, and a spin, whose
     * polls wait behind their work, only keeps its own CQ unarmed. None begins, one under way ends.
     */
    private final AtomicLong answersOnWakeUps = new AtomicLong();

    /** @param threadPrefix what its threads' names start with, {@link RdmaManager#threadPrefix} */
    CompletionPoller(Device device, int threads, String threadPrefix) {
        this.waiters = new Waiter[threads];
        try {
            for (int i = 0; i < threads; i++) {
                waiters[i] = new Waiter(device.createCompletionChannel(),
                        threadPrefix + "poll-" + device.name() + "-" + i);
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
        for (Waiter w : waiters) {
            w.thread.start();
        }
    }

    /** The channel a new CQ should use: channels are handed out in turn. */
    CompletionChannel channel() {
        return waiters[Math.floorMod(next.getAndIncrement(), waiters.length)].channel;
    }

    /**
     * Takes charge of {@code cq}, created on {@link #channel()}: its events go where
     * {@link Subscription#route} says, and {@link Subscription#close()} destroys it. The CQ is not
     * armed: its consumer arms it with {@link Subscription#rearm()}.
     */
    Subscription subscribe(CompletionQueue cq) {
        for (Waiter w : waiters) {
            if (w.channel == cq.channel()) {
                return w.subscribe(cq);
            }
        }
        throw new IllegalArgumentException("the CQ was not created on a channel of this poller");
    }

    /** How often the threads of every poller in this JVM woke up: an idle process makes none. */
    static long wakeUps() {
        return WAKE_UPS.sum();
    }

    /** Spin turns held now, by the connections of every poller in this JVM. */
    static int spinTurnsHeld() {
        return SPIN_TURNS_HELD.get();
    }

    /** Stops the threads and destroys the channels; every CQ on them must be gone. */
    @Override
    public void close() {
        for (Waiter w : waiters) {
            if (w != null) {
                w.close();
            }
        }
    }

    /** A CQ in the poller's charge: routes its events, acks them, and destroys it. */
    final class Subscription implements AutoCloseable {
        private final Waiter waiter;
        private final CompletionQueue cq;
        private volatile Runnable notify = () -> { };
        private volatile Consumer<Throwable> fail = e -> { };
        /** Events the waiter took for this CQ; each must be acked before the CQ is destroyed. */
        private final AtomicInteger received = new AtomicInteger();
        private int acked;
        private boolean closed;

        private Subscription(Waiter waiter, CompletionQueue cq) {
            this.waiter = waiter;
            this.cq = cq;
        }

        /** From now on each event of the CQ tells {@code owner} {@code notified}; a channel failure {@code failed}. */
        <T> void route(ActorRef<T> owner, T notified, Function<Throwable, T> failed) {
            this.fail = e -> owner.tell(failed.apply(e));
            this.notify = () -> owner.tell(notified);
        }

        /** Its owner stopped: events that still come are counted for the ack, and go nowhere. */
        void silence() {
            this.notify = () -> { };
            this.fail = e -> { };
        }

        /**
         * The provider raises this CQ's events in this process and they are handed on where they
         * are raised (the soft fabric), not awaited by a poller thread that must be woken.
         */
        boolean eventsPushed() {
            return waiter.pushed;
        }

        /** Takes one of the device's spin turns, if one is free: give it back with {@link #endSpinTurn()}. */
        boolean takeSpinTurn() {
            if (spinTurns.tryAcquire()) {
                SPIN_TURNS_HELD.incrementAndGet();
                return true;
            }
            return false;
        }

        /** A connection not spinning took an answer when its CQ woke it: the count, with this one. */
        long answeredOnWakeUp() {
            return answersOnWakeUps.incrementAndGet();
        }

        /** How many answers connections not spinning took on wake-ups on this device. */
        long answersOnWakeUps() {
            return answersOnWakeUps.get();
        }

        /** Whether others took {@link #BUSY_ANSWERS} answers on wake-ups since the count was {@code seen}. */
        boolean othersBusySince(long seen) {
            return answersOnWakeUps.get() - seen >= BUSY_ANSWERS;
        }

        void endSpinTurn() {
            SPIN_TURNS_HELD.decrementAndGet();
            spinTurns.release();
        }

        /** Acks what is due and arms the CQ for its next completion: poll after this, not before. */
        void rearm() {
            ack(ACK_BATCH);
            cq.requestNotify(false);
        }

        private synchronized void ack(int batch) {
            int pending = received.get() - acked;
            if (pending >= batch) {
                cq.ackEvents(pending);
                acked += pending;
            }
        }

        /**
         * Stops routing, and has the waiting thread ack every event taken and destroy the CQ
         * between two waits, so no event of the CQ is on its way (rdma-core's destroy would wait
         * for its ack); events still queued on the channel go with the CQ. It returns at once:
         * nothing else waits for a CQ (PD and CM id do not). Call it after the QPs that use the CQ
         * are destroyed.
         */
        @Override
        public void close() {
            if (!closed) {
                closed = true;
                silence();
                waiter.retire(this);
            }
        }

        private void destroy() {
            try {
                ack(1);
                cq.close();
            } catch (RuntimeException e) {
                log.warn("{}: destroying a CQ failed", waiter.thread.getName(), e);
            }
        }
    }

    /** One completion channel and the thread that waits on it. */
    private final class Waiter {
        final CompletionChannel channel;
        final Thread thread;
        /** The channel hands its events to {@link #deliver} on the thread that raises them. */
        final boolean pushed;
        private final Map<CompletionQueue, Subscription> subscriptions = new ConcurrentHashMap<>();
        /** CQs to destroy between two waits. */
        private final Queue<Subscription> retiring = new ConcurrentLinkedQueue<>();
        private volatile boolean running = true;

        Waiter(CompletionChannel channel, String name) {
            this.channel = channel;
            this.thread = new Thread(this::run, name);
            thread.setDaemon(true);
            this.pushed = channel.deliverTo(this::deliver);
        }

        private void deliver(CompletionQueue fired) {
            Subscription s = subscriptions.get(fired);
            if (s != null) {
                s.received.incrementAndGet();
                s.notify.run();
            } else {
                ackStray(fired);
            }
        }

        Subscription subscribe(CompletionQueue cq) {
            Subscription s = new Subscription(this, cq);
            if (!running) {
                throw new IllegalStateException("the completion channel " + thread.getName() + " is closed");
            }
            subscriptions.put(cq, s);
            return s;
        }

        private void run() {
            while (running) {
                CompletionQueue fired;
                try {
                    fired = channel.await(FOREVER);
                } catch (Throwable e) {
                    if (running) {
                        fail(e);
                    }
                    break;
                }
                WAKE_UPS.increment();
                if (fired != null) {
                    deliver(fired);
                }
                retireAll();
            }
            retireAll();
        }

        private void retireAll() {
            Subscription s;
            while ((s = retiring.poll()) != null) {
                subscriptions.remove(s.cq);
                s.destroy();
            }
        }

        /** Every CQ on the channel is subscribed until destroyed here; one that is not still needs its ack. */
        private void ackStray(CompletionQueue cq) {
            try {
                cq.ackEvents(1);
            } catch (RuntimeException e) {
                log.debug("{}: acking an event of an unsubscribed CQ", thread.getName(), e);
            }
        }

        private void fail(Throwable e) {
            log.error("completion channel {} failed", thread.getName(), e);
            running = false;
            subscriptions.values().forEach(s -> s.fail.accept(e));
        }

        /** Has the waiting thread destroy the CQ between two waits, or does it here if that thread ended. */
        void retire(Subscription s) {
            if (Thread.currentThread() == thread || !thread.isAlive()) {
                subscriptions.remove(s.cq);
                s.destroy();
            } else {
                // a thread that ends before it gets to it leaves it to close(), which drains the rest
                retiring.add(s);
                channel.wakeup();
            }
        }

        void close() {
            running = false;
            channel.wakeup();
            boolean interrupted = false;
            while (thread.isAlive()) {
                try {
                    thread.join(100);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
                channel.wakeup();
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            retireAll();
            try {
                channel.close();
            } catch (RuntimeException e) {
                log.warn("{}: {} (the fabric's close frees what is left)", thread.getName(), e.getMessage());
            }
        }
    }
}
