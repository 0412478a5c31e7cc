package io.rdmaactors.soft;

import java.util.concurrent.locks.ReentrantLock;

/**
 * A QP's lock that spins briefly before it parks. Its holders keep it for a post or a response's
 * turn, a few microseconds; a {@link ReentrantLock} parks a waiter at once, and the park and the
 * holder's unpark (a futex each) cost more than the wait: a poster and the thread carrying its
 * peer's ACKs meet on it for every batch of a stream.
 */
final class SpinningLock extends ReentrantLock {

    /** How long a waiter spins before it parks: about a post of a few requests under the lock. */
    private static final long SPIN_NANOS = 2_000;
    /** Spins between looks at the clock, which costs more than a look at the lock. */
    private static final int SPINS_PER_CLOCK = 32;

    @Override
    public void lock() {
        if (tryLock()) {
            return;
        }
        long deadline = System.nanoTime() + SPIN_NANOS;
        for (int spins = 1; ; spins++) {
            Thread.onSpinWait();
            if (!isLocked() && tryLock()) {
                return;
            }
            if (spins % SPINS_PER_CLOCK == 0 && System.nanoTime() - deadline > 0) {
                break;
            }
        }
        super.lock();
    }
}
