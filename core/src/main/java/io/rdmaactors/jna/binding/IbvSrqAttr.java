package io.rdmaactors.jna.binding;

import com.sun.jna.Structure.FieldOrder;

/** {@code struct ibv_srq_attr}, with the {@code enum ibv_srq_attr_mask} bits. */
@FieldOrder({"max_wr", "max_sge", "srq_limit"})
public class IbvSrqAttr extends NativeStruct {
    public static final int LIMIT = 1 << 1;
    public int max_wr;
    public int max_sge;
    public int srq_limit;
}
