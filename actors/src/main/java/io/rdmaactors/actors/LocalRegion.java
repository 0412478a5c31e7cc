package io.rdmaactors.actors;

import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.ScatterGatherElement;
import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * Memory this side registered on one connection for its own use ({@link RdmaProtocol.RegisterMemory}):
 * a Send or Write of a {@link Slice} of it goes from where the bytes are, without the copy into a
 * send buffer a ByteString takes, and a Read into one lands there. The peer has no access to it.
 * The handler writes the bytes through {@link #buffer()} and leaves them unchanged until the Send
 * or Write is acknowledged (or, for a request, answered), and reads a Read's once it completed.
 * Only the connection that registered it uses it; it is deregistered with
 * {@link RdmaProtocol.DeregisterMemory} or when the connection ends.
 */
public final class LocalRegion {

    /** Where in a region a command's bytes are: {@code length} bytes from {@code offset}. */
    public record Slice(LocalRegion region, int offset, int length) {
        public Slice {
            Objects.requireNonNull(region, "region");
            if (offset < 0 || length < 0 || (long) offset + length > region.length()) {
                throw new IllegalArgumentException("range " + offset + "+" + length + " is outside the region of "
                        + region.length() + " bytes");
            }
        }

        /** The slice's bytes, read-only. */
        public ByteBuffer bytes() {
            return region.buffer().slice(offset, length).asReadOnlyBuffer();
        }
    }

    final MemoryRegion memory;
    /** The registering connection's slots: the identity its data path checks. */
    final Object owner;
    /** A chunk of the connection's own receive buffers (Received.slice), not the handler's memory. */
    final boolean receiveBuffers;
    /** A deregistration was asked: commands using this region are refused; confined to the owner's data path. */
    boolean deregistering;

    LocalRegion(MemoryRegion memory, Object owner, boolean receiveBuffers) {
        this.memory = memory;
        this.owner = owner;
        this.receiveBuffers = receiveBuffers;
    }

    /**
     * The registered bytes, position 0 to the limit, for the handler to write; a view of its own
     * per call. Read-only for a region of receive buffers ({@link RdmaProtocol.Received#slice()}):
     * those are the connection's, carrying other messages too.
     */
    public ByteBuffer buffer() {
        return receiveBuffers ? memory.buffer().asReadOnlyBuffer() : memory.buffer();
    }

    public int length() {
        return memory.length();
    }

    /** {@code length} bytes from {@code offset}, to send, write or read into. */
    public Slice slice(int offset, int length) {
        return new Slice(this, offset, length);
    }

    ScatterGatherElement sge(Slice slice) {
        return memory.sge(slice.offset(), slice.length());
    }

    @Override
    public String toString() {
        return "LocalRegion[" + memory.length() + " bytes]";
    }
}
