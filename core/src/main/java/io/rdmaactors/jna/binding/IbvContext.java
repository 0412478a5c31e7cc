package io.rdmaactors.jna.binding;

import com.sun.jna.Structure.FieldOrder;

/** {@code struct ibv_context}: the ops table of the inline verbs and the async event fd. */
@FieldOrder({"device", "ops", "cmd_fd", "async_fd", "num_comp_vectors", "pad_mutex", "abi_compat"})
public class IbvContext extends NativeStruct {
    public long device;
    public Ops ops = new Ops();
    public int cmd_fd;
    public int async_fd;
    public int num_comp_vectors;
    public long[] pad_mutex = new long[5];
    public long abi_compat;

    /** {@code struct ibv_context_ops}: only the verbs that verbs.h inlines are named. */
    @FieldOrder({"pad_0", "alloc_mw", "bind_mw", "dealloc_mw", "pad_4", "poll_cq", "req_notify_cq", "pad_1",
            "post_srq_recv", "pad_2", "post_send", "post_recv", "pad_3"})
    public static class Ops extends NativeStruct {
        public long[] pad_0 = new long[7];
        public long alloc_mw;
        public long bind_mw;
        public long dealloc_mw;
        public long[] pad_4 = new long[1];
        public long poll_cq;
        public long req_notify_cq;
        public long[] pad_1 = new long[7];
        public long post_srq_recv;
        public long[] pad_2 = new long[4];
        public long post_send;
        public long post_recv;
        public long[] pad_3 = new long[5];
    }

    private static final IbvContext LAYOUT = new IbvContext();
    public static final int DEVICE = LAYOUT.offsetOf("device");
    public static final int ALLOC_MW = LAYOUT.offsetOf("ops.alloc_mw");
    public static final int DEALLOC_MW = LAYOUT.offsetOf("ops.dealloc_mw");
    public static final int POLL_CQ = LAYOUT.offsetOf("ops.poll_cq");
    public static final int REQ_NOTIFY_CQ = LAYOUT.offsetOf("ops.req_notify_cq");
    public static final int POST_SRQ_RECV = LAYOUT.offsetOf("ops.post_srq_recv");
    public static final int POST_SEND = LAYOUT.offsetOf("ops.post_send");
    public static final int POST_RECV = LAYOUT.offsetOf("ops.post_recv");
    public static final int ASYNC_FD = LAYOUT.offsetOf("async_fd");
}
