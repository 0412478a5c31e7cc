package io.rdmaactors.jna.binding;

/** The exported functions of librdmacm, direct-mapped; failures return -1 and leave errno. */
public final class Rdmacm {

    private Rdmacm() {
    }

    public static native long rdma_get_devices(int[] count);

    public static native void rdma_free_devices(long list);

    public static native long rdma_create_event_channel();

    public static native void rdma_destroy_event_channel(long channel);

    public static native int rdma_create_id(long channel, long[] id, long context, int portSpace);

    public static native int rdma_destroy_id(long id);

    public static native int rdma_bind_addr(long id, byte[] address);

    public static native int rdma_resolve_addr(long id, byte[] source, byte[] destination, int timeoutMs);

    public static native int rdma_resolve_route(long id, int timeoutMs);

    public static native int rdma_listen(long id, int backlog);

    public static native int rdma_create_qp(long id, long pd, IbvQpInitAttr attr);

    public static native void rdma_destroy_qp(long id);

    public static native int rdma_connect(long id, RdmaConnParam param);

    public static native int rdma_accept(long id, RdmaConnParam param);

    public static native int rdma_reject(long id, byte[] privateData, byte length);

    public static native int rdma_disconnect(long id);

    public static native int rdma_get_cm_event(long channel, long[] event);

    public static native int rdma_ack_cm_event(long event);

    public static native int rdma_migrate_id(long id, long channel);

    public static native int rdma_join_multicast(long id, byte[] address, long context);

    public static native int rdma_leave_multicast(long id, byte[] address);

    /** Returns 0, -1 with errno, or a getaddrinfo EAI_* code. */
    public static native int rdma_getaddrinfo(String node, String service, RdmaAddrinfo hints, long[] result);

    public static native void rdma_freeaddrinfo(long result);
}
