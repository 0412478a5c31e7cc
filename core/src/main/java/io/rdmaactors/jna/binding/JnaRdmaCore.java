package io.rdmaactors.jna.binding;

import com.sun.jna.Function;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import io.rdmaactors.verbs.VerbsException;

/** The binding through JNA: direct-mapped natives ({@link Ibverbs}, {@link Rdmacm}, {@link LibC}). */
public final class JnaRdmaCore extends RdmaCore {

    /** Loads the libraries; throws {@link io.rdmaactors.verbs.FabricUnavailableException} where they are missing. */
    public JnaRdmaCore() {
        NativeLibraries.load();
    }

    @Override
    public int errno() {
        return Native.getLastError();
    }

    @Override
    public ContextOps contextOps(long context) {
        return ContextOps.of(context);
    }

    @Override
    public String ibv_get_device_name(long device) {
        return Ibverbs.ibv_get_device_name(device);
    }

    @Override
    public int ibv_query_device(long context, IbvDeviceAttr attr) {
        return Ibverbs.ibv_query_device(context, attr);
    }

    @Override
    public int ibv_query_port(long context, byte portNum, IbvPortAttr attr) {
        return Ibverbs.ibv_query_port(context, portNum, attr);
    }

    @Override
    public int ibv_query_gid(long context, byte portNum, int index, byte[] gid) {
        return Ibverbs.ibv_query_gid(context, portNum, index, gid);
    }

    @Override
    public long ibv_alloc_pd(long context) {
        return Ibverbs.ibv_alloc_pd(context);
    }

    @Override
    public int ibv_dealloc_pd(long pd) {
        return Ibverbs.ibv_dealloc_pd(pd);
    }

    @Override
    public long ibv_reg_mr(long pd, long addr, long length, int access) {
        return Ibverbs.ibv_reg_mr(pd, addr, length, access);
    }

    @Override
    public int ibv_dereg_mr(long mr) {
        return Ibverbs.ibv_dereg_mr(mr);
    }

    @Override
    public long ibv_alloc_mw(long pd, int type) {
        long op = contextOp(pd, IbvContext.ALLOC_MW);
        if (op == 0) {
            Native.setLastError(VerbsException.EOPNOTSUPP);
            return 0;
        }
        return Pointer.nativeValue(Function.getFunction(new Pointer(op)).invokePointer(new Object[] {new Pointer(pd), type}));
    }

    @Override
    public int ibv_dealloc_mw(long mw) {
        long op = contextOp(mw, IbvContext.DEALLOC_MW);
        if (op == 0) {
            return VerbsException.EOPNOTSUPP;
        }
        return Function.getFunction(new Pointer(op)).invokeInt(new Object[] {new Pointer(mw)});
    }

    /** The ops entry at {@code offset} of the context that the struct at {@code object} names first. */
    private static long contextOp(long object, int offset) {
        Pointer context = new Pointer(object).getPointer(0);
        return Pointer.nativeValue(context.getPointer(offset));
    }

    @Override
    public long ibv_create_comp_channel(long context) {
        return Ibverbs.ibv_create_comp_channel(context);
    }

    @Override
    public int ibv_destroy_comp_channel(long channel) {
        return Ibverbs.ibv_destroy_comp_channel(channel);
    }

    @Override
    public long ibv_create_cq(long context, int cqe, long cqContext, long channel, int compVector) {
        return Ibverbs.ibv_create_cq(context, cqe, cqContext, channel, compVector);
    }

    @Override
    public int ibv_destroy_cq(long cq) {
        return Ibverbs.ibv_destroy_cq(cq);
    }

    @Override
    public int ibv_get_cq_event(long channel, long[] cq, long[] cqContext) {
        return Ibverbs.ibv_get_cq_event(channel, cq, cqContext);
    }

    @Override
    public void ibv_ack_cq_events(long cq, int count) {
        Ibverbs.ibv_ack_cq_events(cq, count);
    }

    @Override
    public long ibv_create_qp(long pd, IbvQpInitAttr attr) {
        return Ibverbs.ibv_create_qp(pd, attr);
    }

    @Override
    public int ibv_modify_qp(long qp, IbvQpAttr attr, int mask) {
        return Ibverbs.ibv_modify_qp(qp, attr, mask);
    }

    @Override
    public int ibv_query_qp(long qp, IbvQpAttr attr, int mask, IbvQpInitAttr init) {
        return Ibverbs.ibv_query_qp(qp, attr, mask, init);
    }

    @Override
    public int ibv_destroy_qp(long qp) {
        return Ibverbs.ibv_destroy_qp(qp);
    }

    @Override
    public long ibv_create_srq(long pd, IbvSrqInitAttr attr) {
        return Ibverbs.ibv_create_srq(pd, attr);
    }

    @Override
    public int ibv_modify_srq(long srq, IbvSrqAttr attr, int mask) {
        return Ibverbs.ibv_modify_srq(srq, attr, mask);
    }

    @Override
    public int ibv_destroy_srq(long srq) {
        return Ibverbs.ibv_destroy_srq(srq);
    }

    @Override
    public long ibv_create_ah(long pd, IbvAhAttr attr) {
        return Ibverbs.ibv_create_ah(pd, attr);
    }

    @Override
    public int ibv_destroy_ah(long ah) {
        return Ibverbs.ibv_destroy_ah(ah);
    }

    @Override
    public int ibv_attach_mcast(long qp, byte[] gid, short lid) {
        return Ibverbs.ibv_attach_mcast(qp, gid, lid);
    }

    @Override
    public int ibv_detach_mcast(long qp, byte[] gid, short lid) {
        return Ibverbs.ibv_detach_mcast(qp, gid, lid);
    }

    @Override
    public int ibv_get_async_event(long context, IbvAsyncEvent event) {
        return Ibverbs.ibv_get_async_event(context, event);
    }

    @Override
    public void ibv_ack_async_event(IbvAsyncEvent event) {
        Ibverbs.ibv_ack_async_event(event);
    }

    @Override
    public long rdma_get_devices(int[] count) {
        return Rdmacm.rdma_get_devices(count);
    }

    @Override
    public void rdma_free_devices(long list) {
        Rdmacm.rdma_free_devices(list);
    }

    @Override
    public long rdma_create_event_channel() {
        return Rdmacm.rdma_create_event_channel();
    }

    @Override
    public void rdma_destroy_event_channel(long channel) {
        Rdmacm.rdma_destroy_event_channel(channel);
    }

    @Override
    public int rdma_create_id(long channel, long[] id, long context, int portSpace) {
        return Rdmacm.rdma_create_id(channel, id, context, portSpace);
    }

    @Override
    public int rdma_destroy_id(long id) {
        return Rdmacm.rdma_destroy_id(id);
    }

    @Override
    public int rdma_bind_addr(long id, byte[] address) {
        return Rdmacm.rdma_bind_addr(id, address);
    }

    @Override
    public int rdma_resolve_addr(long id, byte[] source, byte[] destination, int timeoutMs) {
        return Rdmacm.rdma_resolve_addr(id, source, destination, timeoutMs);
    }

    @Override
    public int rdma_resolve_route(long id, int timeoutMs) {
        return Rdmacm.rdma_resolve_route(id, timeoutMs);
    }

    @Override
    public int rdma_listen(long id, int backlog) {
        return Rdmacm.rdma_listen(id, backlog);
    }

    @Override
    public int rdma_create_qp(long id, long pd, IbvQpInitAttr attr) {
        return Rdmacm.rdma_create_qp(id, pd, attr);
    }

    @Override
    public void rdma_destroy_qp(long id) {
        Rdmacm.rdma_destroy_qp(id);
    }

    @Override
    public int rdma_connect(long id, RdmaConnParam param) {
        return Rdmacm.rdma_connect(id, param);
    }

    @Override
    public int rdma_accept(long id, RdmaConnParam param) {
        return Rdmacm.rdma_accept(id, param);
    }

    @Override
    public int rdma_reject(long id, byte[] privateData, byte length) {
        return Rdmacm.rdma_reject(id, privateData, length);
    }

    @Override
    public int rdma_disconnect(long id) {
        return Rdmacm.rdma_disconnect(id);
    }

    @Override
    public int rdma_get_cm_event(long channel, long[] event) {
        return Rdmacm.rdma_get_cm_event(channel, event);
    }

    @Override
    public int rdma_ack_cm_event(long event) {
        return Rdmacm.rdma_ack_cm_event(event);
    }

    @Override
    public int rdma_migrate_id(long id, long channel) {
        return Rdmacm.rdma_migrate_id(id, channel);
    }

    @Override
    public int rdma_join_multicast(long id, byte[] address, long context) {
        return Rdmacm.rdma_join_multicast(id, address, context);
    }

    @Override
    public int rdma_leave_multicast(long id, byte[] address) {
        return Rdmacm.rdma_leave_multicast(id, address);
    }

    @Override
    public int rdma_getaddrinfo(String node, String service, RdmaAddrinfo hints, long[] result) {
        return Rdmacm.rdma_getaddrinfo(node, service, hints, result);
    }

    @Override
    public void rdma_freeaddrinfo(long result) {
        Rdmacm.rdma_freeaddrinfo(result);
    }

    @Override
    public int fcntl(int fd, int cmd, int arg) {
        return LibC.fcntl(fd, cmd, arg);
    }

    @Override
    public int poll(long fds, long nfds, int timeoutMs) {
        return LibC.poll(fds, nfds, timeoutMs);
    }

    @Override
    public int eventfd(int initval, int flags) {
        return LibC.eventfd(initval, flags);
    }

    @Override
    public long read(int fd, byte[] buffer, long count) {
        return LibC.read(fd, buffer, count);
    }

    @Override
    public long write(int fd, byte[] buffer, long count) {
        return LibC.write(fd, buffer, count);
    }

    @Override
    public int close(int fd) {
        return LibC.close(fd);
    }

    @Override
    public String strerror(int errno) {
        return LibC.strerror(errno);
    }

    @Override
    public String gai_strerror(int code) {
        return LibC.gai_strerror(code);
    }
}
