package io.rdmaactors.soft;

import io.rdmaactors.soft.wire.Packet;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The wire between QPs of one JVM: what a post puts on it runs after the post returned, in order,
 * one at a time, carried by the wire's thread or by an empty poll of a CQ that waits for it
 * ({@link #progress}). While a consumer polls an unarmed CQ, its polls carry what is posted and
 * the thread is not woken for each request: on 2 cores the thread woken per request took a core
 * from the actors (docs/performance.md). The first post of such a stretch wakes it, and it then
 * looks every tick (1 ms, doubling up to 8) for a consumer that stopped polling without arming
 * its CQ, as the links' I/O threads do, until the polls stop.
 */
final class SoftWire {

    private static final Logger log = LoggerFactory.getLogger(SoftWire.class);
    /** A poll this recent, of a CQ still unarmed, counts as a consumer that will carry what is posted. */
    private static final long POLLED_NANOS = 200_000;
    /** Pollers write the time of their poll at most this often: posters read a line that seldom moves. */
    private static final long REFRESH_NANOS = 10_000;
    private static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long MAX_TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(8);
    /** ACKs of one requester's consecutive requests that one ACK stands for, at most: its window moves on. */
    private static final int ACKS_COALESCED = 16;

    private final String threadName;
    /**
     * What is on the wire, newest first: a post pushes with one compare-and-set, and the carrier
     * takes all of it with one swap, where a queue costs a compare-and-set a request on each side
     * of the lines the two threads pass.
     */
    private final AtomicReference<Queued> onTheWire = new AtomicReference<>();
    /** Held by whoever carries what is on the wire: one at a time keeps it in order. */
    private final Semaphore carrying = new Semaphore(1);
    /** Started with the first request on the wire; set under this. */
    private volatile Thread thread;
    /** CQs that carry the wire polled since they were last armed. */
    private final AtomicInteger pollers = new AtomicInteger();
    /** When such a CQ's empty poll last progressed the wire. */
    private volatile long polledAt;
    /** The thread parks for a tick at most: a post that a poll will carry need not wake it. */
    private volatile boolean ticking;
    private volatile boolean stopped;
    /** The ACK held back for the requester whose request was carried last: the carrier's alone. */
    private SoftCompleter ackFor;
    private Packet heldAck;
    private int acksHeld;

    /** A request carried for its requester, whose ACK may stand for the one before ({@link #respond}). */
    interface Request extends Runnable {
        SoftCompleter completer();
    }

    SoftWire(String threadName) {
        this.threadName = threadName;
    }

    /** Puts {@code task} on the wire; dropped once the wire stopped. */
    void carry(Runnable task) {
        if (stopped) {
            return;
        }
        Queued queued = new Queued(task);
        do {
            queued.next = onTheWire.get();
        } while (!onTheWire.compareAndSet(queued.next, queued));
        Thread t = thread;
        if (t == null) {
            t = start();
        }
        if (!ticking || !polled()) {
            LockSupport.unpark(t);
        }
    }

    private synchronized Thread start() {
        if (thread == null && !stopped) {
            Thread t = new Thread(this::run, threadName);
            t.setDaemon(true);
            t.start();
            thread = t;
        }
        return thread;
    }

    /** A CQ that carries the wire is polled, unarmed: its consumer polls on. */
    void pollerStarted() {
        polledAt = System.nanoTime();
        pollers.incrementAndGet();
    }

    /**
     * It was armed or destroyed: the thread is woken for what is on the wire now, which a post
     * after this poller's last poll may have left to it (others that poll on may carry it first).
     */
    void pollerStopped() {
        pollers.decrementAndGet();
        if (onTheWire.get() != null) {
            LockSupport.unpark(thread);
        }
    }

    /**
     * An empty poll of a CQ whose QPs have peers in this JVM carries what is on the wire, unless
     * someone else is: a connection that awaits its answer then takes it without waiting for the
     * wire thread to be woken. {@code pollsOn}: the CQ is unarmed, so its consumer polls on (the
     * poll that follows an arm is its last). Never inside a request it carries: the semaphore is
     * not reentrant.
     */
    void progress(boolean pollsOn) {
        if (pollsOn) {
            long now = System.nanoTime();
            if (now - polledAt >= REFRESH_NANOS) {
                polledAt = now;
            }
        }
        if (onTheWire.get() != null && carrying.tryAcquire()) {
            try {
                carryQueued();
            } finally {
                carrying.release();
            }
        }
    }

    private boolean polled() {
        return pollers.get() > 0 && System.nanoTime() - polledAt < POLLED_NANOS;
    }

    private void run() {
        long tick = TICK_NANOS;
        while (!stopped) {
            carrying.acquireUninterruptibly();
            try {
                carryQueued();
            } finally {
                carrying.release();
            }
            if (polled()) {
                ticking = true;
                LockSupport.parkNanos(this, tick);
                tick = Math.min(2 * tick, MAX_TICK_NANOS);
            } else {
                ticking = false; // before the look at the queue: a post after it sees the flag and wakes it
                tick = TICK_NANOS;
                if (onTheWire.get() == null && !stopped) {
                    LockSupport.park(this);
                }
            }
        }
    }

    private void carryQueued() {
        while (!stopped) {
            Queued q = oldestFirst(onTheWire.getAndSet(null));
            if (q == null) {
                releaseAck(); // the wire is empty; the completions may post more: carry those too
                if (onTheWire.get() == null) {
                    return;
                }
                continue;
            }
            for (; q != null && !stopped; q = q.next) {
                Runnable task = q.task;
                if (heldAck != null && !(task instanceof Request r && r.completer() == ackFor)) {
                    releaseAck(); // whatever else runs sees the requests before it acknowledged
                }
                try {
                    task.run();
                } catch (RuntimeException e) {
                    // a fault of the fabric's own must not reach the poll that carried it, nor stop the wire
                    log.error("the soft fabric's wire failed to carry a request", e);
                }
            }
        }
        releaseAck();
    }

    /** Reverses a stack of what was posted into the order of the posts. */
    private static Queued oldestFirst(Queued newest) {
        Queued oldest = null;
        while (newest != null) {
            Queued next = newest.next;
            newest.next = oldest;
            oldest = newest;
            newest = next;
        }
        return oldest;
    }

    /** A task on the wire, linked to the one posted before it (after it once taken). */
    private static final class Queued {
        final Runnable task;
        Queued next;

        Queued(Runnable task) {
            this.task = task;
        }
    }

    /**
     * Called by a {@link Request} as it runs, with its response. An ACK is held while the wire
     * carries further requests of the same requester, each ACK standing for those before it (IB
     * ACK coalescing), so that a stream's requester takes one ACK, and its lock once, a run of
     * requests rather than each; it is released before any other task runs, after
     * {@link #ACKS_COALESCED}, and when the wire is empty. Any other response reaches the
     * requester at once, after the ACK held for it.
     */
    void respond(SoftCompleter completer, Packet response) {
        if (response.kind() == Packet.Kind.ACK) {
            holdAck(completer, response);
            return;
        }
        if (completer == ackFor) {
            releaseAck();
        }
        completer.onResponse(response);
    }

    private void holdAck(SoftCompleter completer, Packet ack) {
        if (completer != ackFor) {
            releaseAck();
        }
        ackFor = completer;
        heldAck = ack;
        if (++acksHeld >= ACKS_COALESCED) {
            releaseAck();
        }
    }

    private void releaseAck() {
        Packet ack = heldAck;
        if (ack == null) {
            return;
        }
        SoftCompleter completer = ackFor;
        heldAck = null;
        ackFor = null;
        acksHeld = 0;
        try {
            completer.onResponse(ack);
        } catch (RuntimeException e) {
            log.error("the soft fabric's wire failed to deliver an ACK", e);
        }
    }

    /**
     * Stops carrying, as a device's engines stop before its resources go: what was not carried is
     * dropped, and the QPs flush it. Returns once neither the thread nor a poll carries anything.
     */
    void stop() {
        Thread t;
        synchronized (this) {
            stopped = true;
            t = thread;
        }
        try {
            if (t != null) {
                LockSupport.unpark(t);
                t.join(TimeUnit.SECONDS.toMillis(5));
            }
            // a poll may be carrying a request: it stops after it
            if (carrying.tryAcquire(5, TimeUnit.SECONDS)) {
                carrying.release();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        onTheWire.set(null);
    }
}
