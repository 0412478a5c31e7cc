package io.rdmaactors.soft;

import io.rdmaactors.verbs.ResourceClosedException;
import io.rdmaactors.verbs.ResourceKind;

/** What every soft resource shares: one ledger entry, idempotent close, typed use-after-close. */
abstract class SoftResource implements AutoCloseable {

    final SoftFabric fabric;
    private final ResourceKind kind;
    /** Written under the monitor, read by every verb's check: a field, one object less per resource. */
    private volatile boolean closed;

    SoftResource(SoftFabric fabric, ResourceKind kind) {
        this.fabric = fabric;
        this.kind = kind;
        fabric.ledger().opened(kind);
        fabric.track(this);
    }

    final boolean isClosed() {
        return closed;
    }

    final void checkOpen(String call) {
        if (closed) {
            throw new ResourceClosedException(call, kind + " is closed");
        }
    }

    /** Checks that the resource may be destroyed; throws to refuse (a busy resource). */
    void checkDestroyable() {
    }

    /** Releases what the resource holds; runs once, after {@link #checkDestroyable()} passed. */
    abstract void destroy();

    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            checkDestroyable();
            closed = true;
        }
        release();
    }

    /** Closes regardless of dependants, for fabric shutdown and device removal. */
    final void forceClose() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        release();
    }

    private void release() {
        try {
            destroy();
        } finally {
            fabric.untrack(this);
            fabric.ledger().closed(kind);
        }
    }
}
