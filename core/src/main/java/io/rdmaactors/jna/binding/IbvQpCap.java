package io.rdmaactors.jna.binding;

import com.sun.jna.Structure.FieldOrder;

/** {@code struct ibv_qp_cap}. */
@FieldOrder({"max_send_wr", "max_recv_wr", "max_send_sge", "max_recv_sge", "max_inline_data"})
public class IbvQpCap extends NativeStruct {
    public int max_send_wr;
    public int max_recv_wr;
    public int max_send_sge;
    public int max_recv_sge;
    public int max_inline_data;
}
