package io.rdmaactors.actors;

/**
 * The arrays a connection's handler handed back ({@link RdmaProtocol.Release}), for its QP actor
 * to copy later messages into: a new array costs its allocation and, at a few kilobytes, the
 * cache misses of memory the cache has not seen, where the last released one is still in it.
 * The last released is taken first for that reason. An idle connection holds none.
 * Single-threaded: the QP actor's.
 */
final class ReleasedArrays {

    /** Messages smaller than this get a new array: it costs less than the handler's Release. */
    static final int MIN_LENGTH = 256;
    /** Enough for a handler that releases as it goes; a larger backlog allocates, as without any. */
    private static final int KEPT = 16;

    private final int maxLength;
    private byte[][] kept;
    private int count;

    /** @param maxLength the longest message taken from a slot: the receive buffers' size */
    ReleasedArrays(int maxLength) {
        this.maxLength = maxLength;
    }

    /**
     * An array for a message of {@code length} bytes: the last one released if it is long enough
     * and at most twice as long (what a handler that keeps the message holds beyond it), else a
     * new one of exactly that length.
     */
    byte[] take(int length) {
        if (count > 0) {
            byte[] last = kept[count - 1];
            if (last.length >= length && last.length <= 2 * length) {
                kept[--count] = null;
                return last;
            }
        }
        return new byte[length];
    }

    /** Keeps {@code array} for a later message if it could carry one and there is room. */
    void give(byte[] array) {
        if (array.length < MIN_LENGTH || array.length > maxLength) {
            return;
        }
        if (kept == null) {
            kept = new byte[KEPT][];
        }
        if (count < KEPT) {
            kept[count++] = array;
        }
    }
}
