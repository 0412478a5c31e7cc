package io.rdmaactors.soft;

import io.rdmaactors.verbs.ResourceClosedException;
import io.rdmaactors.verbs.ResourceKind;
import java.util.concurrent.atomic.AtomicBoolean;

/** What every soft resource shares: one ledger entry, idempotent close, typed use-after-close. */
abstract class SoftResource implements AutoCloseable {

    final SoftFabric fabric;
    private final ResourceKind kind;
    private final AtomicBoolean closed = new AtomicBoolean();

    SoftResource(SoftFabric fabric, ResourceKind kind) {
        this.fabric = fabric;
        this.kind = kind;
        fabric.ledger().opened(kind);
        fabric.track(this);
    }

    final boolean isClosed() {
        return closed.get();
    }

    final void checkOpen(String call) {
        if (closed.get()) {
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
            if (closed.get()) {
                return;
            }
            checkDestroyable();
            closed.set(true);
        }
        release();
    }

    /** Closes regardless of dependants, for fabric shutdown and device removal. */
    final void forceClose() {
        synchronized (this) {
            if (closed.get()) {
                return;
            }
            closed.set(true);
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
