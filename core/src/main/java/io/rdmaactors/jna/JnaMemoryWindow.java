package io.rdmaactors.jna;

import com.sun.jna.Pointer;
import io.rdmaactors.jna.binding.IbvMw;
import io.rdmaactors.verbs.InvalidRequestException;
import io.rdmaactors.verbs.MemoryWindow;
import io.rdmaactors.verbs.ResourceKind;

/** An {@code ibv_mw} of type 2. */
final class JnaMemoryWindow extends JnaResource implements MemoryWindow {

    /** {@code IBV_MW_TYPE_2}. */
    static final int TYPE_2 = 2;

    final JnaProtectionDomain pd;

    JnaMemoryWindow(JnaProtectionDomain pd, long mw) {
        super(pd.fabric, ResourceKind.MEMORY_WINDOW, mw);
        this.pd = pd;
    }

    static JnaMemoryWindow of(MemoryWindow mw) {
        if (mw instanceof JnaMemoryWindow j) {
            return j;
        }
        throw new InvalidRequestException("ibv_post_send", "not a memory window of the jna fabric: " + mw);
    }

    @Override
    public int rkey() {
        long mw = enter("ibv_mw");
        try {
            return new Pointer(mw).getInt(IbvMw.RKEY);
        } finally {
            exit();
        }
    }

    /**
     * A bind of the window was posted: its key is the bind's from now on, as the application keeps
     * {@code ibv_mw.rkey} (rxe names the window by it when the next bind or invalidation is posted).
     * The caller holds the window entered.
     */
    void posted(int rkey) {
        new Pointer(pointer).setInt(IbvMw.RKEY, rkey);
    }

    @Override
    String destroyCall() {
        return "ibv_dealloc_mw";
    }

    @Override
    int destroy(boolean force) {
        return core.ibv_dealloc_mw(pointer);
    }
}
