package io.rdmaactors.verbs;

import java.nio.ByteBuffer;
import java.util.Set;

/**
 * Registered memory ({@code ibv_mr}). Work requests name it by {@link #address(int)} and
 * {@link #lkey()}; a peer may name it by address and {@link #rkey()} only for the access rights it
 * was registered with.
 */
public interface MemoryRegion extends AutoCloseable {

    /** The address of the first registered byte, as work requests and peers name it. */
    long address();

    default long address(int offset) {
        return address() + offset;
    }

    int length();

    int lkey();

    int rkey();

    Set<Access> access();

    /** A view of the registered bytes (position 0, limit {@link #length()}). */
    ByteBuffer buffer();

    /** An SGE covering {@code length} bytes at {@code offset}. */
    default ScatterGatherElement sge(int offset, int length) {
        if (offset < 0 || length < 0 || (long) offset + length > length()) {
            throw new InvalidRequestException("ibv_sge", "range " + offset + "+" + length
                    + " is outside the region of " + length() + " bytes");
        }
        return new ScatterGatherElement(address() + offset, length, lkey());
    }

    default ScatterGatherElement sge() {
        return sge(0, length());
    }

    @Override
    void close();
}
