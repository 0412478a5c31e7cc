package io.rdmaactors.jna;

/** The exported functions of librdmacm, direct-mapped; failures return -1 and leave errno. */
final class Rdmacm {

    private Rdmacm() {
    }

    static native long rdma_get_devices(int[] count);

    static native void rdma_free_devices(long list);

    static native long rdma_create_event_channel();

    static native void rdma_destroy_event_channel(long channel);

    static native int rdma_create_id(long channel, long[] id, long context, int portSpace);

    static native int rdma_destroy_id(long id);

    static native int rdma_bind_addr(long id, byte[] address);

    static native int rdma_resolve_addr(long id, byte[] source, byte[] destination, int timeoutMs);

    static native int rdma_resolve_route(long id, int timeoutMs);

    static native int rdma_listen(long id, int backlog);

    static native int rdma_create_qp(long id, long pd, IbvQpInitAttr attr);

    static native void rdma_destroy_qp(long id);

    static native int rdma_connect(long id, RdmaConnParam param);

    static native int rdma_accept(long id, RdmaConnParam param);

    static native int rdma_reject(long id, byte[] privateData, byte length);

    static native int rdma_disconnect(long id);

    static native int rdma_get_cm_event(long channel, long[] event);

    static native int rdma_ack_cm_event(long event);

    static native int rdma_migrate_id(long id, long channel);

    static native int rdma_join_multicast(long id, byte[] address, long context);

    static native int rdma_leave_multicast(long id, byte[] address);

    /** Returns 0, -1 with errno, or a getaddrinfo EAI_* code. */
    static native int rdma_getaddrinfo(String node, String service, RdmaAddrinfo hints, long[] result);

    static native void rdma_freeaddrinfo(long result);
}
