package io.rdmaactors.verbs;

import io.rdmaactors.cm.AddressVector;
import java.nio.ByteBuffer;
import java.util.Set;

/** A protection domain ({@code ibv_pd}): memory, QPs, SRQs and address handles live in one. */
public interface ProtectionDomain extends AutoCloseable {

    Device device();

    /**
     * Registers a direct buffer, from its position to its limit ({@code ibv_reg_mr}). Remote access
     * must be asked for explicitly; REMOTE_WRITE and REMOTE_ATOMIC need LOCAL_WRITE too.
     */
    MemoryRegion register(ByteBuffer buffer, Set<Access> access);

    /** Registers for local use only: the least privilege. */
    default MemoryRegion register(ByteBuffer buffer) {
        return register(buffer, Set.of(Access.LOCAL_WRITE));
    }

    /** Allocates a type 2 memory window, unbound ({@code ibv_alloc_mw}). */
    MemoryWindow allocateMemoryWindow();

    QueuePair createQueuePair(QpInitAttributes attributes);

    SharedReceiveQueue createSharedReceiveQueue(int maxWr, int maxSge);

    AddressHandle createAddressHandle(AddressVector addressVector);

    /** Fails with {@link ResourceBusyException} while anything created in it is still open. */
    @Override
    void close();
}
