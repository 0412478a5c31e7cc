package io.rdmaactors.jna;

/**
 * The exported functions of libibverbs, direct-mapped. Pointers travel as {@code long}; a failed call
 * leaves errno in {@link com.sun.jna.Native#getLastError()} or returns it, as rdma-core documents.
 */
final class Ibverbs {

    private Ibverbs() {
    }

    static native String ibv_get_device_name(long device);

    static native int ibv_query_device(long context, IbvDeviceAttr attr);

    static native int ibv_query_port(long context, byte portNum, IbvPortAttr attr);

    static native int ibv_query_gid(long context, byte portNum, int index, byte[] gid);

    static native long ibv_alloc_pd(long context);

    static native int ibv_dealloc_pd(long pd);

    static native long ibv_reg_mr(long pd, long addr, long length, int access);

    static native int ibv_dereg_mr(long mr);

    static native long ibv_create_comp_channel(long context);

    static native int ibv_destroy_comp_channel(long channel);

    static native long ibv_create_cq(long context, int cqe, long cqContext, long channel, int compVector);

    static native int ibv_destroy_cq(long cq);

    static native int ibv_get_cq_event(long channel, long[] cq, long[] cqContext);

    static native void ibv_ack_cq_events(long cq, int count);

    static native long ibv_create_qp(long pd, IbvQpInitAttr attr);

    static native int ibv_modify_qp(long qp, IbvQpAttr attr, int mask);

    static native int ibv_query_qp(long qp, IbvQpAttr attr, int mask, IbvQpInitAttr init);

    static native int ibv_destroy_qp(long qp);

    static native long ibv_create_srq(long pd, IbvSrqInitAttr attr);

    static native int ibv_modify_srq(long srq, IbvSrqAttr attr, int mask);

    static native int ibv_destroy_srq(long srq);

    static native long ibv_create_ah(long pd, IbvAhAttr attr);

    static native int ibv_destroy_ah(long ah);

    static native int ibv_attach_mcast(long qp, byte[] gid, short lid);

    static native int ibv_detach_mcast(long qp, byte[] gid, short lid);

    static native int ibv_get_async_event(long context, IbvAsyncEvent event);

    static native void ibv_ack_async_event(IbvAsyncEvent event);
}
