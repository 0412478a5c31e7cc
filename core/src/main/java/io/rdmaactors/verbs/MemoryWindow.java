package io.rdmaactors.verbs;

/**
 * A type 2 memory window ({@code ibv_mw} of {@code IBV_MW_TYPE_2}): a remote key for a range of a
 * region, bound to one QP by a {@link SendWorkRequest#bind} posted on it and unbound by a
 * {@link SendWorkRequest#localInvalidate}. Only that QP's peer can use the key, so regions of one
 * protection domain can be shared with several peers, each seeing only what was bound for it.
 * The region must be registered with {@link Access#MW_BIND}.
 */
public interface MemoryWindow extends AutoCloseable {

    /**
     * The key of the last bind posted (the allocated one before any): the one its peer names the
     * window by once that bind completed, and the one {@link SendWorkRequest#localInvalidate} takes.
     */
    int rkey();

    /** The key the next bind gives: the same window index, the next key byte ({@code ibv_inc_rkey}). */
    default int nextRkey() {
        int key = rkey();
        return (key & 0xFFFFFF00) | ((key + 1) & 0xFF);
    }

    /** Deallocates the window ({@code ibv_dealloc_mw}); a bound one stops granting access at once. */
    @Override
    void close();
}
