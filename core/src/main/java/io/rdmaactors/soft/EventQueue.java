package io.rdmaactors.soft;

import io.rdmaactors.cm.EventSource;
import io.rdmaactors.verbs.ResourceClosedException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/** A blocking FIFO of events with a wake-up, the soft counterpart of a pollable event fd. */
class EventQueue<E> implements EventSource<E> {

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition ready = lock.newCondition();
    private final ArrayDeque<E> events = new ArrayDeque<>();
    private boolean woken;
    private boolean closed;

    void post(E event) {
        lock.lock();
        try {
            if (!closed) {
                events.add(event);
                ready.signal();
            }
        } finally {
            lock.unlock();
        }
    }

    @Override
    public E await(Duration timeout) throws InterruptedException {
        long nanos = timeout.toNanos();
        lock.lockInterruptibly();
        try {
            while (events.isEmpty() && !woken && !closed && nanos > 0) {
                nanos = ready.awaitNanos(nanos);
            }
            if (closed) {
                throw new ResourceClosedException("get_event", "the event source is closed");
            }
            woken = false;
            return events.poll();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void wakeup() {
        lock.lock();
        try {
            woken = true;
            ready.signalAll();
        } finally {
            lock.unlock();
        }
    }

    void close() {
        lock.lock();
        try {
            closed = true;
            events.clear();
            ready.signalAll();
        } finally {
            lock.unlock();
        }
    }
}
