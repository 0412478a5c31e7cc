package io.rdmaactors.actors;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * The data path's executor: a fixed set of threads running tasks (actor mailboxes), where a thread
 * that runs out of work polls for more for {@code spin} before it parks.
 *
 * <ul>
 *   <li><b>No wake-up per message.</b> A fork-join pool wakes a parked thread for nearly every
 *       message between two actors, which costs more than an RDMA round trip.
 *       Here a task submitted by one of the threads runs on it next, so a handler, its QP actor
 *       and a peer in this process hand messages on without a wake-up, on one core's cache; the
 *       first such task waits in a plain field of the thread's, the ones behind it in its queue.
 *       A task from elsewhere (a link's I/O thread, a timer, another dispatcher) goes to the
 *       shared queue, where a spinning thread takes it within a poll; only when none spins is a
 *       parked one unparked.</li>
 *   <li><b>Parallel where there is a backlog.</b> A thread out of work takes from another's queue
 *       only what waits behind that thread's next task, so a chain of messages stays on its
 *       thread and a burst is shared; a thread that queues a third task while nobody spins
 *       unparks one to share it. One task behind the next is a conversation going on (a QP
 *       actor's mailbox behind the handler it just told), not a backlog: a second thread taking
 *       it would keep two cores busy for one connection, and on a machine shared with the peer's
 *       process make the two processes' four threads take turns on its cores.</li>
 *   <li><b>Bounded waiting.</b> At most {@code spinners} threads spin at once, and a thread parks
 *       for good once its spin ended: an idle executor makes no wake-ups.</li>
 * </ul>
 */
final class SpinningExecutor extends AbstractExecutorService {

    /** The worker the calling thread is, of whichever spinning executor; null elsewhere. */
    private static final ThreadLocal<Worker> CURRENT = new ThreadLocal<>();

    private final ConcurrentLinkedQueue<Runnable> shared = new ConcurrentLinkedQueue<>();
    private final Worker[] workers;
    private final long spinNanos;
    private final int maxSpinners;
    /** Threads polling for work now: a submission with one of them wakes nobody. */
    private final AtomicInteger spinning = new AtomicInteger();
    private final AtomicBoolean shutdown = new AtomicBoolean();
    private final CountDownLatch terminated;

    SpinningExecutor(int threads, Duration spin, int spinners, ThreadFactory threadFactory) {
        if (threads < 1 || spinners < 0 || spin.isNegative()) {
            throw new IllegalArgumentException("threads must be at least 1, spinners and spin not negative: "
                    + threads + ", " + spinners + ", " + spin);
        }
        this.spinNanos = spin.toNanos();
        this.maxSpinners = spinners;
        this.workers = new Worker[threads];
        this.terminated = new CountDownLatch(threads);
        for (int i = 0; i < threads; i++) {
            workers[i] = new Worker();
            workers[i].thread = threadFactory.newThread(workers[i]);
        }
        for (Worker w : workers) {
            w.thread.start();
        }
    }

    /** Whether the calling thread is one of a spinning executor's: it polls for work before it parks. */
    static boolean onWorkerThread() {
        return CURRENT.get() != null;
    }

    /**
     * Runs {@code task} on the calling thread once the tasks it submitted before have run, waking
     * no other thread for it and letting none take it: a QP actor's next poll of its spin, behind
     * the handler it has just told. A second thread would take the poll while this one runs the
     * handler, and two JVMs on two cores would then keep four threads busy. False, and nothing
     * done, off a spinning executor's threads.
     */
    static boolean runAfterQueued(Runnable task) {
        Worker self = CURRENT.get();
        if (self == null) {
            return false;
        }
        self.after.add(task);
        return true;
    }

    /**
     * Whether tasks wait to run next on the calling thread, a spinning executor's: a spin's next
     * poll then goes behind them ({@link #runAfterQueued}), since what they are (a peer's actor in
     * this process that the poll's work on the wire made runnable, or a handler) is what the spin
     * waits for. False off a spinning executor's threads.
     */
    static boolean workWaiting() {
        Worker self = CURRENT.get();
        return self != null && (self.next != null || self.queued.get() > 0);
    }

    @Override
    public void execute(Runnable task) {
        if (shutdown.get()) {
            throw new RejectedExecutionException("the executor is shut down");
        }
        Worker self = worker(Thread.currentThread());
        if (self != null) {
            // the worker runs it next; only a backlog (two behind the next) is worth another thread
            if (self.next == null && self.queued.get() == 0) {
                self.next = task;
            } else {
                self.local.add(task);
                if (self.queued.incrementAndGet() > 1 && spinning.get() == 0) {
                    wakeOne();
                }
            }
            return;
        }
        shared.add(task);
        // the add comes before this read, and a spinner's last look after its decrement: a spinner
        // that stops now still finds the task
        if (spinning.get() == 0) {
            wakeOne();
        }
    }

    /** The worker that is {@code thread}, or null: a comparison per core, cheaper than a thread-local's lookup. */
    private Worker worker(Thread thread) {
        for (Worker w : workers) {
            if (w.thread == thread) {
                return w;
            }
        }
        return null;
    }

    private void wakeOne() {
        for (Worker w : workers) {
            if (w.unpark()) {
                return;
            }
        }
    }

    @Override
    public void shutdown() {
        if (shutdown.compareAndSet(false, true)) {
            for (Worker w : workers) {
                w.unpark();
            }
        }
    }

    @Override
    public List<Runnable> shutdownNow() {
        shutdown();
        List<Runnable> left = new ArrayList<>();
        for (Runnable r; (r = shared.poll()) != null; ) {
            left.add(r);
        }
        for (Worker w : workers) {
            for (Runnable r; (r = w.take()) != null; ) {
                left.add(r);
            }
            for (Runnable r; (r = w.after.poll()) != null; ) {
                left.add(r);
            }
        }
        return left;
    }

    @Override
    public boolean isShutdown() {
        return shutdown.get();
    }

    @Override
    public boolean isTerminated() {
        return terminated.getCount() == 0;
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        return terminated.await(timeout, unit);
    }

    private final class Worker implements Runnable {
        Thread thread;
        /** The task this worker submitted while its queue was empty: it runs next, and only this thread sees it. */
        Runnable next;
        /** Tasks this worker submitted behind {@link #next}: others may take them. */
        final ConcurrentLinkedQueue<Runnable> local = new ConcurrentLinkedQueue<>();
        final AtomicInteger queued = new AtomicInteger();
        /** Tasks that run on this thread once its queue is empty ({@link #runAfterQueued}); nobody takes them. */
        final ConcurrentLinkedQueue<Runnable> after = new ConcurrentLinkedQueue<>();
        /** Parked, or about to: the first to clear it unparks the thread. */
        private final AtomicBoolean wakeable = new AtomicBoolean();

        boolean unpark() {
            if (wakeable.get() && wakeable.compareAndSet(true, false)) {
                LockSupport.unpark(thread);
                return true;
            }
            return false;
        }

        Runnable take() {
            Runnable task = local.poll();
            if (task != null) {
                queued.decrementAndGet();
            }
            return task;
        }

        /** A task from behind another worker's next one. */
        private Runnable steal() {
            for (Worker victim : workers) {
                if (victim != this && victim.queued.get() > 0) {
                    Runnable task = victim.take();
                    if (task != null) {
                        return task;
                    }
                }
            }
            return null;
        }

        private Runnable look() {
            Runnable task = next;
            if (task != null) {
                next = null;
                return task;
            }
            task = take();
            if (task == null) {
                task = after.poll();
            }
            if (task == null) {
                task = shared.poll();
            }
            return task != null ? task : steal();
        }

        @Override
        public void run() {
            CURRENT.set(this);
            try {
                for (Runnable task; (task = next()) != null; ) {
                    try {
                        task.run();
                    } catch (Throwable t) {
                        thread.getUncaughtExceptionHandler().uncaughtException(thread, t);
                    }
                }
            } finally {
                terminated.countDown();
            }
        }

        /** The next task: at once, within a spin, or after a park; null once shut down with nothing left. */
        private Runnable next() {
            Runnable task = look();
            if (task != null) {
                return task;
            }
            if (spinNanos > 0 && startSpin()) {
                long start = System.nanoTime();
                try {
                    do {
                        Thread.onSpinWait();
                        if ((task = look()) != null) {
                            return task;
                        }
                    } while (System.nanoTime() - start < spinNanos && !shutdown.get());
                } finally {
                    spinning.decrementAndGet();
                }
            }
            while (true) {
                wakeable.set(true);
                if ((task = look()) != null || shutdown.get()) {
                    wakeable.set(false);
                    return task;
                }
                LockSupport.park(this);
                wakeable.set(false);
            }
        }

        private boolean startSpin() {
            for (int n = spinning.get(); n < maxSpinners; n = spinning.get()) {
                if (spinning.compareAndSet(n, n + 1)) {
                    return true;
                }
            }
            return false;
        }
    }
}
