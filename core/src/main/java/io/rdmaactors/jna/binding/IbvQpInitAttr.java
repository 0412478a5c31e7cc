package io.rdmaactors.jna.binding;

import com.sun.jna.Structure.FieldOrder;

/** {@code struct ibv_qp_init_attr}. */
@FieldOrder({"qp_context", "send_cq", "recv_cq", "srq", "cap", "qp_type", "sq_sig_all"})
public class IbvQpInitAttr extends NativeStruct {
    public long qp_context;
    public long send_cq;
    public long recv_cq;
    public long srq;
    public IbvQpCap cap = new IbvQpCap();
    public int qp_type;
    public int sq_sig_all;
}
