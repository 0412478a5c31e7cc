package io.rdmaactors.jna;

import com.sun.jna.Native;
import com.sun.jna.Pointer;
import io.rdmaactors.cm.AddressVector;
import io.rdmaactors.jna.binding.IbvAhAttr;
import io.rdmaactors.jna.binding.IbvQpInitAttr;
import io.rdmaactors.jna.binding.IbvSrqInitAttr;
import io.rdmaactors.verbs.Access;
import io.rdmaactors.verbs.AddressHandle;
import io.rdmaactors.verbs.Device;
import io.rdmaactors.verbs.InvalidRequestException;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.MemoryWindow;
import io.rdmaactors.verbs.ProtectionDomain;
import io.rdmaactors.verbs.QpInitAttributes;
import io.rdmaactors.verbs.QueuePair;
import io.rdmaactors.verbs.ResourceKind;
import io.rdmaactors.verbs.SharedReceiveQueue;
import java.nio.ByteBuffer;
import java.util.Set;

/** An {@code ibv_pd}; rdma-core refuses to free it (EBUSY) while anything made in it lives. */
final class JnaProtectionDomain extends JnaResource implements ProtectionDomain {

    final JnaDevice device;

    JnaProtectionDomain(JnaDevice device, long pd) {
        super(device.fabric, ResourceKind.PROTECTION_DOMAIN, pd);
        this.device = device;
    }

    static JnaProtectionDomain of(ProtectionDomain pd, String call) {
        if (pd instanceof JnaProtectionDomain j) {
            return j;
        }
        throw new InvalidRequestException(call, "not a protection domain of the jna fabric: " + pd);
    }

    @Override
    public Device device() {
        return device;
    }

    @Override
    public MemoryRegion register(ByteBuffer buffer, Set<Access> access) {
        if (!buffer.isDirect()) {
            throw new InvalidRequestException("ibv_reg_mr", "only direct buffers can be registered");
        }
        int mask = Access.mask(access);
        if ((mask & (Access.REMOTE_WRITE.bit() | Access.REMOTE_ATOMIC.bit())) != 0
                && (mask & Access.LOCAL_WRITE.bit()) == 0) {
            throw new InvalidRequestException("ibv_reg_mr", "REMOTE_WRITE and REMOTE_ATOMIC need LOCAL_WRITE");
        }
        ByteBuffer view = buffer.slice();
        long address = Pointer.nativeValue(Native.getDirectBufferPointer(view));
        long pd = enter("ibv_reg_mr");
        try {
            long mr = core.ibv_reg_mr(pd, address, view.capacity(), mask);
            if (mr == 0) {
                throw core.lastError("ibv_reg_mr");
            }
            return new JnaMemoryRegion(this, mr, view, address, access);
        } finally {
            exit();
        }
    }

    @Override
    public MemoryWindow allocateMemoryWindow() {
        long pd = enter("ibv_alloc_mw");
        try {
            long mw = core.ibv_alloc_mw(pd, JnaMemoryWindow.TYPE_2);
            if (mw == 0) {
                throw core.lastError("ibv_alloc_mw");
            }
            return new JnaMemoryWindow(this, mw);
        } finally {
            exit();
        }
    }

    @Override
    public QueuePair createQueuePair(QpInitAttributes attributes) {
        IbvQpInitAttr init = JnaQueuePair.initAttr(attributes, "ibv_create_qp");
        long pd = enter("ibv_create_qp");
        try {
            long qp = core.ibv_create_qp(pd, init);
            if (qp == 0) {
                throw core.lastError("ibv_create_qp");
            }
            return new JnaQueuePair(this, qp, null, attributes, init);
        } finally {
            exit();
        }
    }

    @Override
    public SharedReceiveQueue createSharedReceiveQueue(int maxWr, int maxSge) {
        IbvSrqInitAttr init = new IbvSrqInitAttr();
        init.attr.max_wr = maxWr;
        init.attr.max_sge = maxSge;
        long pd = enter("ibv_create_srq");
        try {
            long srq = core.ibv_create_srq(pd, init);
            if (srq == 0) {
                throw core.lastError("ibv_create_srq");
            }
            return new JnaSharedReceiveQueue(this, srq, maxWr);
        } finally {
            exit();
        }
    }

    @Override
    public AddressHandle createAddressHandle(AddressVector addressVector) {
        IbvAhAttr attr = new IbvAhAttr();
        attr.set(addressVector);
        long pd = enter("ibv_create_ah");
        try {
            long ah = core.ibv_create_ah(pd, attr);
            if (ah == 0) {
                throw core.lastError("ibv_create_ah");
            }
            return new JnaAddressHandle(this, ah, addressVector);
        } finally {
            exit();
        }
    }

    @Override
    String destroyCall() {
        return "ibv_dealloc_pd";
    }

    @Override
    int destroy(boolean force) {
        return core.ibv_dealloc_pd(pointer);
    }
}
