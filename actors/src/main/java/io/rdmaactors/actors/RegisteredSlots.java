package io.rdmaactors.actors;

import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.ProtectionDomain;
import io.rdmaactors.verbs.ScatterGatherElement;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * Registered memory cut into equal slots, one per queue entry, registered as a connection first
 * needs them: an idle connection pins one slot, a request-response one two, a busy one grows to
 * its queue depth (as RDMA servers grow their buffer pools with load).
 */
final class RegisteredSlots implements AutoCloseable {

    /**
     * Slots of the first chunk, the receive an idle connection keeps posted. The second chunk is
     * one slot as well: receives grow when a poll finds more than half of them used, so a
     * request-response connection grows to two and no further, and the 10,000 idle connections
     * of a large server pin one each. (One: chunk() and offset() count on it.)
     */
    static final int FIRST = 1;
    /** The chunks of FIRST slots, before whole chunks. */
    private static final int SINGLES = 2;
    /** Slots registered together after the singles. */
    static final int CHUNK = 8;

    private final ProtectionDomain pd;
    private final int slotSize;
    private final int capacity;
    private final List<MemoryRegion> chunks = new ArrayList<>();
    /** Each chunk's memory, viewed once: MemoryRegion.buffer() makes a new view per call. */
    private final List<ByteBuffer> views = new ArrayList<>();
    /** Each chunk as a region a Send may be posted from, made at the first such use. */
    private final List<LocalRegion> regions = new ArrayList<>(0);

    RegisteredSlots(ProtectionDomain pd, int slotSize, int capacity) {
        this.pd = pd;
        this.slotSize = slotSize;
        this.capacity = capacity;
    }

    int slotSize() {
        return slotSize;
    }

    /** The most slots this can grow to. */
    int capacity() {
        return capacity;
    }

    /** Slots registered so far: 0 to {@code allocated() - 1}. */
    int allocated() {
        int n = chunks.size();
        return Math.min(n <= SINGLES ? n : SINGLES + (n - SINGLES) * CHUNK, capacity);
    }

    /** How many chunks {@code capacity} slots take. */
    static int chunksFor(int capacity) {
        return capacity <= SINGLES ? capacity : SINGLES + (capacity - SINGLES + CHUNK - 1) / CHUNK;
    }

    /**
     * Registers the next chunk.
     *
     * @return the first new slot, or -1 at capacity
     */
    int grow() {
        int first = allocated();
        if (first >= capacity) {
            return -1;
        }
        int slots = Math.min(chunks.size() < SINGLES ? FIRST : CHUNK, capacity - first);
        MemoryRegion chunk = pd.register(ByteBuffer.allocateDirect(slots * slotSize));
        chunks.add(chunk);
        views.add(chunk.buffer().order(ByteOrder.nativeOrder()));
        return first;
    }

    ScatterGatherElement sge(int slot, int length) {
        return chunks.get(chunk(slot)).sge(offset(slot), length);
    }

    /** The chunk's memory in native order; the slot starts at {@link #offset}. */
    ByteBuffer memory(int slot) {
        return views.get(chunk(slot));
    }

    /** The chunk holding {@code slot} as a region of {@code owner}'s, to send from where a message landed. */
    LocalRegion region(int slot, Object owner) {
        int chunk = chunk(slot);
        while (regions.size() <= chunk) {
            regions.add(null);
        }
        LocalRegion region = regions.get(chunk);
        if (region == null) {
            region = new LocalRegion(chunks.get(chunk), owner, true);
            regions.set(chunk, region);
        }
        return region;
    }

    int offset(int slot) {
        return slot < SINGLES ? 0 : (slot - SINGLES) % CHUNK * slotSize;
    }

    private static int chunk(int slot) {
        return slot < SINGLES ? slot : SINGLES + (slot - SINGLES) / CHUNK;
    }

    @Override
    public void close() {
        chunks.forEach(MemoryRegion::close);
        chunks.clear();
        views.clear();
        regions.clear();
    }
}
