package io.rdmaactors.soft;

import io.rdmaactors.verbs.Access;
import io.rdmaactors.verbs.MemoryWindow;
import io.rdmaactors.verbs.ResourceKind;
import io.rdmaactors.verbs.SendWorkRequest;
import java.util.Set;

/**
 * A type 2 memory window, as rxe_mw.c keeps one: free until a bind on a QP of its PD makes it valid
 * for that QP alone, free again after a local invalidation. Binds and invalidations run under the
 * posting QP's sendLock; the responder of the bound QP reads the binding under its recvLock, so the
 * binding is published as one immutable object.
 */
final class SoftMemoryWindow extends SoftResource implements MemoryWindow {

    /** What a valid window grants: one QP, a range of one region, remote rights, under one key. */
    record Binding(int rkey, SoftQueuePair qp, SoftMemoryRegion region, long address, long length,
                   Set<Access> access) {
    }

    final SoftProtectionDomain pd;
    private final int index;
    /** The key the last bind posted gives it, as the application tracks {@code ibv_mw.rkey}. */
    private volatile int postedRkey;
    /** Null while free. */
    private volatile Binding binding;

    SoftMemoryWindow(SoftProtectionDomain pd) {
        super(pd.fabric, ResourceKind.MEMORY_WINDOW);
        this.pd = pd;
        this.postedRkey = pd.device.allocate(this);
        this.index = postedRkey >>> 8;
        pd.dependants.incrementAndGet();
    }

    @Override
    public int rkey() {
        return postedRkey;
    }

    void posted(int rkey) {
        postedRkey = rkey;
    }

    /**
     * Runs a bind posted on {@code qp}: null when it took effect, else why not (the request then
     * completes with MW_BIND_ERR). The checks are the IBA's, in rxe's order.
     */
    String bind(SoftQueuePair qp, SendWorkRequest.WindowBind bind) {
        if (isClosed()) {
            return "the window is deallocated";
        }
        if (binding != null) {
            return "a type 2 window is bound until invalidated";
        }
        if (qp.pd != pd) {
            return "the window belongs to another protection domain than the QP";
        }
        if ((bind.rkey() >>> 8) != index) {
            return "the new key names another window";
        }
        if (!(bind.region() instanceof SoftMemoryRegion mr) || mr.isClosed() || mr.pd != pd) {
            return "the region is not a live region of the window's protection domain";
        }
        if (bind.length() <= 0) {
            return "a type 2 window is bound to a range of at least one byte";
        }
        if (!mr.access().contains(Access.MW_BIND)) {
            return "the region was not registered with MW_BIND";
        }
        if ((bind.access().contains(Access.REMOTE_WRITE) || bind.access().contains(Access.REMOTE_ATOMIC))
                && !mr.access().contains(Access.LOCAL_WRITE)) {
            return "remote write and atomic rights need a region with LOCAL_WRITE";
        }
        if (!mr.covers(bind.address(), bind.length())) {
            return "the range lies outside the region";
        }
        mr.windows.incrementAndGet();
        binding = new Binding(bind.rkey(), qp, mr, bind.address(), bind.length(), bind.access());
        return null;
    }

    /** Runs a local invalidation of {@code rkey} posted on {@code qp}: null when it took effect. */
    String invalidate(SoftQueuePair qp, int rkey) {
        Binding b = binding;
        if (isClosed() || b == null || b.rkey() != rkey) {
            return "no window is bound under that key";
        }
        if (qp.pd != pd) {
            return "the window belongs to another protection domain than the QP";
        }
        unbind();
        return null;
    }

    private void unbind() {
        Binding b = binding;
        if (b != null) {
            binding = null;
            b.region().windows.decrementAndGet();
        }
    }

    /**
     * The region behind {@code rkey} if this window, bound to {@code qp} under that very key, covers
     * the range and grants the right; else null.
     */
    SoftMemoryRegion grants(SoftQueuePair qp, int rkey, long address, long length, Access right) {
        Binding b = binding;
        if (b == null || b.rkey() != rkey || b.qp() != qp || !b.access().contains(right) || length < 0
                || address < b.address() || address - b.address() > b.length() - length) {
            return null;
        }
        return b.region().isClosed() ? null : b.region();
    }

    @Override
    void destroy() {
        unbind();
        // by its index: a bind built by hand may have posted a key that names another window
        pd.device.deallocate(index);
        pd.dependants.decrementAndGet();
    }
}
