package io.rdmaactors.jna;

import io.rdmaactors.jna.binding.RdmaCore;
import io.rdmaactors.verbs.ResourceClosedException;
import io.rdmaactors.verbs.ResourceKind;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * What every jna resource shares: a native pointer that no call can use after the resource is
 * destroyed (calls hold a read lock, destroy holds the write lock), an idempotent close, one
 * ledger entry, and a typed error on use after close instead of a crash.
 */
abstract class JnaResource implements AutoCloseable {

    final JnaFabric fabric;
    /** The binding every call on the resource goes through. */
    final RdmaCore core;
    final long pointer;
    private final ResourceKind kind;
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    private volatile boolean closed;

    JnaResource(JnaFabric fabric, ResourceKind kind, long pointer) {
        this.fabric = fabric;
        this.core = fabric.core;
        this.kind = kind;
        this.pointer = pointer;
        fabric.ledger().opened(kind);
        fabric.track(this);
    }

    /** Enters a call on the native object; every enter is paired with {@link #exit()}. */
    final long enter(String call) {
        lock.readLock().lock();
        if (closed) {
            lock.readLock().unlock();
            throw new ResourceClosedException(call, kind + " is closed");
        }
        return pointer;
    }

    final void exit() {
        lock.readLock().unlock();
    }

    final boolean isClosed() {
        return closed;
    }

    final ResourceKind kind() {
        return kind;
    }

    /** Refuses a destroy that native code would block on or corrupt memory for. */
    void checkDestroyable() {
    }

    /** Stops waits on the resource before it is destroyed. */
    void stopWaits() {
    }

    /** Lets waits run again after a refused destroy. */
    void resumeWaits() {
    }

    /** The rdma-core destroy call, for error messages. */
    abstract String destroyCall();

    /** Frees the native object: 0 or the errno it failed with (then the resource stays open). */
    abstract int destroy(boolean force);

    /** Unlinks the resource from its owners once destroyed. */
    void destroyed() {
    }

    @Override
    public void close() {
        close(false);
    }

    /** A forced close (fabric shutdown) skips the busy checks and cannot fail. */
    final void close(boolean force) {
        if (closed) {
            return;
        }
        if (!force) {
            checkDestroyable();
        }
        stopWaits();
        lock.writeLock().lock();
        try {
            if (closed) {
                return;
            }
            int rc = destroy(force);
            if (rc != 0 && !force) {
                resumeWaits();
                throw core.failure(destroyCall(), rc);
            }
            closed = true;
        } finally {
            lock.writeLock().unlock();
        }
        destroyed();
        fabric.untrack(this);
        fabric.ledger().closed(kind);
    }
}
