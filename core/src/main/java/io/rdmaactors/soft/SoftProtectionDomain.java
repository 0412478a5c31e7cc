package io.rdmaactors.soft;

import io.rdmaactors.cm.AddressVector;
import io.rdmaactors.verbs.Access;
import io.rdmaactors.verbs.AddressHandle;
import io.rdmaactors.verbs.Device;
import io.rdmaactors.verbs.InvalidRequestException;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.ProtectionDomain;
import io.rdmaactors.verbs.QpInitAttributes;
import io.rdmaactors.verbs.QueuePair;
import io.rdmaactors.verbs.ResourceBusyException;
import io.rdmaactors.verbs.ResourceKind;
import io.rdmaactors.verbs.SharedReceiveQueue;
import java.nio.ByteBuffer;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

final class SoftProtectionDomain extends SoftResource implements ProtectionDomain {

    final SoftDevice device;
    /** MRs, QPs, SRQs and AHs created in this PD and not yet destroyed. */
    final AtomicInteger dependants = new AtomicInteger();

    SoftProtectionDomain(SoftDevice device) {
        super(device.fabric, ResourceKind.PROTECTION_DOMAIN);
        this.device = device;
    }

    @Override
    public Device device() {
        return device;
    }

    @Override
    public MemoryRegion register(ByteBuffer buffer, Set<Access> access) {
        checkUsable("ibv_reg_mr");
        if (buffer == null || !buffer.isDirect()) {
            throw new InvalidRequestException("ibv_reg_mr", "only direct buffers can be registered");
        }
        if (buffer.remaining() == 0) {
            throw new InvalidRequestException("ibv_reg_mr", "the buffer has no bytes between position and limit");
        }
        if ((access.contains(Access.REMOTE_WRITE) || access.contains(Access.REMOTE_ATOMIC))
                && !access.contains(Access.LOCAL_WRITE)) {
            throw new InvalidRequestException("ibv_reg_mr", "REMOTE_WRITE and REMOTE_ATOMIC need LOCAL_WRITE");
        }
        return new SoftMemoryRegion(this, buffer, access);
    }

    @Override
    public QueuePair createQueuePair(QpInitAttributes attributes) {
        checkUsable("ibv_create_qp");
        return new SoftQueuePair(this, attributes);
    }

    @Override
    public SharedReceiveQueue createSharedReceiveQueue(int maxWr, int maxSge) {
        checkUsable("ibv_create_srq");
        if (maxWr < 1 || maxWr > SoftDevice.MAX_WR || maxSge < 1 || maxSge > SoftDevice.MAX_SGE) {
            throw new InvalidRequestException("ibv_create_srq", "max_wr " + maxWr + " or max_sge " + maxSge
                    + " out of the device's range");
        }
        return new SoftSharedReceiveQueue(this, maxWr, maxSge);
    }

    @Override
    public AddressHandle createAddressHandle(AddressVector addressVector) {
        checkUsable("ibv_create_ah");
        device.port(addressVector.portNum(), "ibv_create_ah");
        return new SoftAddressHandle(this, addressVector);
    }

    void checkUsable(String call) {
        checkOpen(call);
        device.checkAlive(call);
    }

    @Override
    void checkDestroyable() {
        int n = dependants.get();
        if (n > 0) {
            throw new ResourceBusyException("ibv_dealloc_pd", n + " resources still use the protection domain");
        }
    }

    @Override
    void destroy() {
    }
}
