package io.rdmaactors.actors;

import io.rdmaactors.verbs.Access;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.MemoryWindow;
import io.rdmaactors.verbs.ProtectionDomain;
import io.rdmaactors.verbs.SendWorkRequest;
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
 * the buffer. Where the protection domain is shared with other connections (a shared receive queue's), a
 * large Send's region grants nothing by its own key: the peer reads it through a type 2 memory
 * window bound to this connection's QP just before the announcement, closed with the region.
 * Confined to the connection's QP actor.
 */
final class RendezvousRegions {

    /**
     * A large Send announced, awaiting the peer's Done: {@code rkey} is what the peer reads it by,
     * the region's own or, with a {@code window}, the key the window's bind gives it.
     */
    record LargeSend(RdmaProtocol.Send send, int id, MemoryRegion region, MemoryWindow window, int rkey) {
        /** The bind that must precede the announcement, or null without a window. */
        SendWorkRequest bind(long wrId) {
            return window == null ? null : SendWorkRequest.bind(wrId, window, region, READ);
        }
    }

    /** A window's bind of a large Send: posted right before its announcement, in the same send queue. */
    record WindowBind(LargeSend large) {
    }

    private static final Set<Access> READ = Set.of(Access.REMOTE_READ);

    /** What {@link #regions} holds for a region over the handler's registered memory: nothing to pool. */
    private static final ByteBuffer HANDLERS_MEMORY = ByteBuffer.allocate(0);

    private final ProtectionDomain pd;
    /** Whether other connections share {@link #pd}: a large Send is then read through a window. */
    private final boolean windowed;
    /** The window of each region that has one, closed before it. */
    private final Map<MemoryRegion, MemoryWindow> windows = new HashMap<>();
    /** Large Sends announced, until the peer says Done or they fail, by rendezvous id. */
    private final Map<Integer, LargeSend> announced = new HashMap<>();
    /** Every region registered, with the pooled buffer it is a slice of (HANDLERS_MEMORY: none). */
    private final Map<MemoryRegion, ByteBuffer> regions = new HashMap<>();
    private int nextId;

    RendezvousRegions(ProtectionDomain pd, boolean windowed) {
        this.pd = pd;
        this.windowed = windowed;
    }

    /**
     * Registers a large Send for the peer to read, remote read only. A Send from registered memory
     * is read where it is: its bytes alone are registered again; a ByteString is copied into
     * pooled memory. From now on the peer may read it and say Done, even before the completion of
     * its announcement is polled.
     */
    LargeSend announce(RdmaProtocol.Send send) {
        Set<Access> access = windowed ? Set.of(Access.MW_BIND) : READ;
        MemoryRegion region;
        if (send.from() != null) {
            LocalRegion.Slice from = send.from();
            region = pd.register(from.region().memory.buffer().slice(from.offset(), from.length()), access);
            regions.put(region, HANDLERS_MEMORY);
        } else {
            region = registerPooled(send.size(), send.data().asByteBuffer(), access);
        }
        MemoryWindow window = null;
        if (windowed) {
            try {
                window = pd.allocateMemoryWindow();
            } catch (RuntimeException e) {
                release(region);
                throw e;
            }
            windows.put(region, window);
        }
        // a fresh window's next key is the one its only bind gives it
        LargeSend large = new LargeSend(send, nextId++, region, window,
                window != null ? window.nextRkey() : region.rkey());
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
            deregister(region);
        }
    }

    /** Closes the region's window, if it has one (unbinding it), then the region. */
    private void deregister(MemoryRegion region) {
        MemoryWindow window = windows.remove(region);
        if (window != null) {
            window.close();
        }
        region.close();
    }

    /** Deregisters a region whose message is through, and gives its buffer back for reuse. */
    void recycle(MemoryRegion region) {
        ByteBuffer pooled = regions.remove(region);
        if (pooled != null) {
            deregister(region);
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
        windows.values().forEach(MemoryWindow::close);
        windows.clear();
        regions.keySet().forEach(MemoryRegion::close);
        regions.clear();
        announced.clear();
    }
}
