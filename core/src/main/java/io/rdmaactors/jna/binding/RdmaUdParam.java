package io.rdmaactors.jna.binding;

import com.sun.jna.Structure.FieldOrder;

/** {@code struct rdma_ud_param}. */
@FieldOrder({"private_data", "private_data_len", "ah_attr", "qp_num", "qkey"})
public class RdmaUdParam extends NativeStruct {
    public long private_data;
    public byte private_data_len;
    public IbvAhAttr ah_attr = new IbvAhAttr();
    public int qp_num;
    public int qkey;
}
