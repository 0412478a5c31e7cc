package io.rdmaactors.actors;

import io.rdmaactors.actors.RendezvousRegions.LargeSend;
import io.rdmaactors.verbs.MemoryRegion;
import java.util.ArrayList;
import java.util.List;

/**
 * The memory a connection's handler registered for its own use ({@link LocalRegion}), as its QP
 * actor keeps it: registration, which command may use which region, and the deregistrations that
 * wait until nothing outstanding uses their region. Single-threaded: the QP actor's.
 */
final class LocalRegions {

    private final ConnectionBuffers buffers;
    /** What the connection posted or announced: a region they use is not deregistered yet. */
    private final SendQueue sends;
    private final RendezvousRegions rendezvous;
    /** Deregistrations asked for, waiting for the commands using their regions to complete; made at the first. */
    private List<RdmaProtocol.DeregisterMemory> deregistrations;

    LocalRegions(ConnectionBuffers buffers, SendQueue sends, RendezvousRegions rendezvous) {
        this.buffers = buffers;
        this.sends = sends;
        this.rendezvous = rendezvous;
    }

    /** Local access only: Sends and Writes read the memory, Reads write it. */
    void register(RdmaProtocol.RegisterMemory r) {
        try {
            MemoryRegion memory = buffers.pd.register(r.buffer());
            buffers.local.add(memory);
            r.replyTo().tell(new RdmaProtocol.MemoryRegistered(new LocalRegion(memory, buffers, false)));
        } catch (RuntimeException e) {
            r.replyTo().tell(new RdmaProtocol.CommandFailed(r, e));
        }
    }

    /** Why a data command may not use the registered memory it names, or null (also for one that names none). */
    RuntimeException refusal(RdmaProtocol.DataCommand command) {
        LocalRegion.Slice registered = registeredSlice(command);
        return registered != null ? refusal(command, registered.region()) : null;
    }

    /**
     * Why {@code command} (a data command, or a DeregisterMemory) may not use {@code region}, or
     * null: it must be this connection's; its receive buffers are only sent or written from; and
     * a region being deregistered takes nothing more.
     */
    RuntimeException refusal(Object command, LocalRegion region) {
        if (region.owner != buffers) {
            return new IllegalArgumentException(region + " was registered on another connection");
        }
        if (region.receiveBuffers && !(command instanceof RdmaProtocol.Send || command instanceof RdmaProtocol.Write)) {
            return new IllegalArgumentException(region + " is the connection's receive buffers: a Send or Write may"
                    + " go on from them, nothing more");
        }
        if (!region.deregistering) {
            return null;
        }
        return command instanceof RdmaProtocol.DeregisterMemory
                ? new IllegalArgumentException(region + " is already being deregistered")
                : new IllegalStateException(region + " is being deregistered");
    }

    /** A deregistration that {@link #refusal} allowed: its region takes no more commands, and waits for {@link #deregisterUnused}. */
    void deregisterWhenUnused(RdmaProtocol.DeregisterMemory d) {
        d.region().deregistering = true;
        if (deregistrations == null) {
            deregistrations = new ArrayList<>(1);
        }
        deregistrations.add(d);
    }

    /** Deregisters each region asked for that no command waiting or outstanding still uses. */
    void deregisterUnused() {
        if (deregistrations == null || deregistrations.isEmpty()) {
            return;
        }
        deregistrations.removeIf(d -> {
            LocalRegion region = d.region();
            if (sends.any(item -> uses(item, region)) || rendezvous.anyAnnounced(l -> uses(l, region))) {
                return false;
            }
            buffers.local.remove(region.memory);
            region.memory.close();
            d.replyTo().tell(new RdmaProtocol.MemoryDeregistered(region));
            return true;
        });
    }

    /** The connection ended: the deregistrations waiting are answered; the QP's end deregisters their memory with its buffers. */
    void connectionEnded() {
        if (deregistrations != null) {
            deregistrations.forEach(d -> d.replyTo().tell(new RdmaProtocol.MemoryDeregistered(d.region())));
            deregistrations.clear();
        }
    }

    private static boolean uses(Object item, LocalRegion region) {
        LocalRegion.Slice used = registeredSlice(item);
        return used != null && used.region() == region;
    }

    /**
     * The registered memory a Send (a large one too, which the peer reads from there) or Write is
     * from, or a Read is into; null for any other.
     */
    private static LocalRegion.Slice registeredSlice(Object item) {
        if (item instanceof RdmaProtocol.Send s) {
            return s.from();
        }
        if (item instanceof LargeSend l) {
            return l.send().from();
        }
        if (item instanceof RdmaProtocol.Write w) {
            return w.from();
        }
        return item instanceof RdmaProtocol.Read r ? r.into() : null;
    }
}
