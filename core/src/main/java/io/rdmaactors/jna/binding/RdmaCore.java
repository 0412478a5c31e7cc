package io.rdmaactors.jna.binding;

import io.rdmaactors.verbs.VerbsException;

/**
 * Every call the rdma-core provider makes into librdmacm, libibverbs and libc, behind one binding so
 * that its resources run unchanged over JNA ({@link JnaRdmaCore}) or over the FFM API (the ffm
 * module). Names and arguments are rdma-core's; pointers travel as {@code long}; a struct argument
 * is written to its native memory before the call and read back after it, as JNA does for one.
 */
public abstract class RdmaCore {

    /** errno as the calling thread's last call into this binding left it. */
    public abstract int errno();

    /** The inline verbs (post, poll, arm) of the verbs context at {@code context}. */
    public abstract ContextOps contextOps(long context);

    public abstract String ibv_get_device_name(long device);

    public abstract int ibv_query_device(long context, IbvDeviceAttr attr);

    public abstract int ibv_query_port(long context, byte portNum, IbvPortAttr attr);

    public abstract int ibv_query_gid(long context, byte portNum, int index, byte[] gid);

    public abstract long ibv_alloc_pd(long context);

    public abstract int ibv_dealloc_pd(long pd);

    public abstract long ibv_reg_mr(long pd, long addr, long length, int access);

    public abstract int ibv_dereg_mr(long mr);

    /**
     * {@code ibv_alloc_mw}, inline in verbs.h: the driver's {@code ops.alloc_mw}, or NULL with
     * EOPNOTSUPP where the driver has none.
     */
    public abstract long ibv_alloc_mw(long pd, int type);

    /** {@code ibv_dealloc_mw}, inline in verbs.h: the driver's {@code ops.dealloc_mw}. */
    public abstract int ibv_dealloc_mw(long mw);

    public abstract long ibv_create_comp_channel(long context);

    public abstract int ibv_destroy_comp_channel(long channel);

    public abstract long ibv_create_cq(long context, int cqe, long cqContext, long channel, int compVector);

    public abstract int ibv_destroy_cq(long cq);

    public abstract int ibv_get_cq_event(long channel, long[] cq, long[] cqContext);

    public abstract void ibv_ack_cq_events(long cq, int count);

    public abstract long ibv_create_qp(long pd, IbvQpInitAttr attr);

    public abstract int ibv_modify_qp(long qp, IbvQpAttr attr, int mask);

    public abstract int ibv_query_qp(long qp, IbvQpAttr attr, int mask, IbvQpInitAttr init);

    public abstract int ibv_destroy_qp(long qp);

    public abstract long ibv_create_srq(long pd, IbvSrqInitAttr attr);

    public abstract int ibv_modify_srq(long srq, IbvSrqAttr attr, int mask);

    public abstract int ibv_destroy_srq(long srq);

    public abstract long ibv_create_ah(long pd, IbvAhAttr attr);

    public abstract int ibv_destroy_ah(long ah);

    public abstract int ibv_attach_mcast(long qp, byte[] gid, short lid);

    public abstract int ibv_detach_mcast(long qp, byte[] gid, short lid);

    public abstract int ibv_get_async_event(long context, IbvAsyncEvent event);

    public abstract void ibv_ack_async_event(IbvAsyncEvent event);

    public abstract long rdma_get_devices(int[] count);

    public abstract void rdma_free_devices(long list);

    public abstract long rdma_create_event_channel();

    public abstract void rdma_destroy_event_channel(long channel);

    public abstract int rdma_create_id(long channel, long[] id, long context, int portSpace);

    public abstract int rdma_destroy_id(long id);

    public abstract int rdma_bind_addr(long id, byte[] address);

    public abstract int rdma_resolve_addr(long id, byte[] source, byte[] destination, int timeoutMs);

    public abstract int rdma_resolve_route(long id, int timeoutMs);

    public abstract int rdma_listen(long id, int backlog);

    public abstract int rdma_create_qp(long id, long pd, IbvQpInitAttr attr);

    public abstract void rdma_destroy_qp(long id);

    public abstract int rdma_connect(long id, RdmaConnParam param);

    public abstract int rdma_accept(long id, RdmaConnParam param);

    public abstract int rdma_reject(long id, byte[] privateData, byte length);

    public abstract int rdma_disconnect(long id);

    public abstract int rdma_get_cm_event(long channel, long[] event);

    public abstract int rdma_ack_cm_event(long event);

    public abstract int rdma_migrate_id(long id, long channel);

    public abstract int rdma_join_multicast(long id, byte[] address, long context);

    public abstract int rdma_leave_multicast(long id, byte[] address);

    /** Returns 0, -1 with errno, or a getaddrinfo EAI_* code. */
    public abstract int rdma_getaddrinfo(String node, String service, RdmaAddrinfo hints, long[] result);

    public abstract void rdma_freeaddrinfo(long result);

    public abstract int fcntl(int fd, int cmd, int arg);

    public abstract int poll(long fds, long nfds, int timeoutMs);

    public abstract int eventfd(int initval, int flags);

    public abstract long read(int fd, byte[] buffer, long count);

    public abstract long write(int fd, byte[] buffer, long count);

    public abstract int close(int fd);

    public abstract String strerror(int errno);

    public abstract String gai_strerror(int code);

    /** The typed exception for a call that failed with {@code errno}. */
    public final VerbsException failure(String call, int errno) {
        return VerbsException.of(call, errno, errno > 0 ? strerror(errno) : "failed");
    }

    /** The typed exception for a call that returned -1 or NULL and left errno. */
    public final VerbsException lastError(String call) {
        return failure(call, errno());
    }
}
