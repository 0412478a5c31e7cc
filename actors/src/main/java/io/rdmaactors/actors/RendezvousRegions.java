package io.rdmaactors.actors;

import io.rdmaactors.verbs.Access;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.ProtectionDomain;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The memory one connection registered for rendezvous ({@link Rendezvous}): each large Send it
 * announced, registered for the peer to read until the peer says Done, and the memory each large
 * message of the peer's is read into. Pooled memory ({@link RendezvousMemory}) is registered
 * exactly as large as its message, so a region never shows a peer what an earlier message left in
 * the buffer. Confined to the connection's QP actor.
 */
final class RendezvousRegions {

    /** A large Send announced, awaiting the peer's Done. */
    record LargeSend(RdmaProtocol.Send send, int id, MemoryRegion region) {
    }

    /** What {@link #regions} holds for a region over the handler's registered memory: nothing to pool. */
    private static final ByteBuffer HANDLERS_MEMORY = ByteBuffer.allocate(0);

    private final ProtectionDomain pd;
    /** Large Sends announced, until the peer says Done or they fail, by rendezvous id. */
    private final Map<Integer, LargeSend> announced = new HashMap<>();
    /** Every region registered, with the pooled buffer it is a slice of (HANDLERS_MEMORY: none). */
    private final Map<MemoryRegion, ByteBuffer> regions = new HashMap<>();
    private int nextId;

    RendezvousRegions(ProtectionDomain pd) {
        this.pd = pd;
    }

    /**
     * Registers a large Send for the peer to read, remote read only. A Send from registered memory
     * is read where it is: its bytes alone are registered again; a ByteString is copied into
     * pooled memory. From now on the peer may read it and say Done, even before the completion of
     * its announcement is polled.
     */
    LargeSend announce(RdmaProtocol.Send send) {
        MemoryRegion region;
        if (send.from() != null) {
            LocalRegion.Slice from = send.from();
            region = pd.register(from.region().memory.buffer().slice(from.offset(), from.length()),
                    Set.of(Access.REMOTE_READ));
            regions.put(region, HANDLERS_MEMORY);
        } else {
            region = registerPooled(send.size(), send.data().asByteBuffer(), Set.of(Access.REMOTE_READ));
        }
        LargeSend large = new LargeSend(send, nextId++, region);
        announced.put(large.id(), large);
        return large;
    }

    /** Registers pooled memory, local write only, to read a large message of {@code length} bytes into. */
    MemoryRegion registerForRead(int length) {
        return registerPooled(length, null, Set.of(Access.LOCAL_WRITE));
    }

    private MemoryRegion registerPooled(int size, ByteBuffer contents, Set<Access> access) {
        ByteBuffer pooled = RendezvousMemory.take(size);
        ByteBuffer slice = pooled.duplicate().clear().limit(size).slice();
        if (contents != null) {
            slice.put(contents).clear();
        }
        MemoryRegion region = pd.register(slice, access);
        regions.put(region, pooled);
        return region;
    }

    /** The peer read Send {@code id}: its memory goes back; the Send, or null if it already failed. */
    LargeSend done(int id) {
        LargeSend large = announced.remove(id);
        if (large != null) {
            recycle(large.region());
        }
        return large;
    }

    /** A large Send that will not be read (its announcement failed): false if it was answered already. */
    boolean fail(LargeSend large) {
        if (announced.remove(large.id()) == null) {
            return false;
        }
        release(large.region());
        return true;
    }

    /**
     * Deregisters a region whose message failed. Its buffer is not reused: a link may still be
     * sending from it, and reused it would carry another message's bytes.
     */
    void release(MemoryRegion region) {
        if (regions.remove(region) != null) {
            region.close();
        }
    }

    /** Deregisters a region whose message is through, and gives its buffer back for reuse. */
    void recycle(MemoryRegion region) {
        ByteBuffer pooled = regions.remove(region);
        if (pooled != null) {
            region.close();
            if (pooled != HANDLERS_MEMORY) {
                RendezvousMemory.give(pooled);
            }
        }
    }

    /** No large Send awaits its Done. */
    boolean nothingAnnounced() {
        return announced.isEmpty();
    }

    /** Whether a large Send awaiting its Done is one {@code test} accepts. */
    boolean anyAnnounced(Predicate<LargeSend> test) {
        return announced.values().stream().anyMatch(test);
    }

    /** The large Sends still awaiting their Done, to fail when the connection ends. */
    List<LargeSend> outstanding() {
        return List.copyOf(announced.values());
    }

    /** The connection ended: every region left is deregistered (fail the {@link #outstanding} Sends first). */
    void close() {
        regions.keySet().forEach(MemoryRegion::close);
        regions.clear();
        announced.clear();
    }
}
