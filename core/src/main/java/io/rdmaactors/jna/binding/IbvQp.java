package io.rdmaactors.jna.binding;

import com.sun.jna.Structure.FieldOrder;

/** The leading fields of {@code struct ibv_qp}. */
@FieldOrder({"context", "qp_context", "pd", "send_cq", "recv_cq", "srq", "handle", "qp_num", "state", "qp_type"})
public class IbvQp extends NativeStruct {
    public long context;
    public long qp_context;
    public long pd;
    public long send_cq;
    public long recv_cq;
    public long srq;
    public int handle;
    public int qp_num;
    public int state;
    public int qp_type;

    public static final int QP_NUM = new IbvQp().offsetOf("qp_num");
}
