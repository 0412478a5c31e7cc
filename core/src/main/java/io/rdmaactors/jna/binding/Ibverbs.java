package io.rdmaactors.jna.binding;

/**
 * The exported functions of libibverbs, direct-mapped. Pointers travel as {@code long}; a failed call
 * leaves errno in {@link com.sun.jna.Native#getLastError()} or returns it, as rdma-core documents.
 */
public final class Ibverbs {

    private Ibverbs() {
    }

    public static native String ibv_get_device_name(long device);

    public static native int ibv_query_device(long context, IbvDeviceAttr attr);

    public static native int ibv_query_port(long context, byte portNum, IbvPortAttr attr);

    public static native int ibv_query_gid(long context, byte portNum, int index, byte[] gid);

    public static native long ibv_alloc_pd(long context);

    public static native int ibv_dealloc_pd(long pd);

    public static native long ibv_reg_mr(long pd, long addr, long length, int access);

    public static native int ibv_dereg_mr(long mr);

    public static native long ibv_create_comp_channel(long context);

    public static native int ibv_destroy_comp_channel(long channel);

    public static native long ibv_create_cq(long context, int cqe, long cqContext, long channel, int compVector);

    public static native int ibv_destroy_cq(long cq);

    public static native int ibv_get_cq_event(long channel, long[] cq, long[] cqContext);

    public static native void ibv_ack_cq_events(long cq, int count);

    public static native long ibv_create_qp(long pd, IbvQpInitAttr attr);

    public static native int ibv_modify_qp(long qp, IbvQpAttr attr, int mask);

    public static native int ibv_query_qp(long qp, IbvQpAttr attr, int mask, IbvQpInitAttr init);

    public static native int ibv_destroy_qp(long qp);

    public static native long ibv_create_srq(long pd, IbvSrqInitAttr attr);

    public static native int ibv_modify_srq(long srq, IbvSrqAttr attr, int mask);

    public static native int ibv_destroy_srq(long srq);

    public static native long ibv_create_ah(long pd, IbvAhAttr attr);

    public static native int ibv_destroy_ah(long ah);

    public static native int ibv_attach_mcast(long qp, byte[] gid, short lid);

    public static native int ibv_detach_mcast(long qp, byte[] gid, short lid);

    public static native int ibv_get_async_event(long context, IbvAsyncEvent event);

    public static native void ibv_ack_async_event(IbvAsyncEvent event);
}
