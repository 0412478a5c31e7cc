package io.rdmaactors.jna.binding;

import com.sun.jna.Structure.FieldOrder;

/** {@code struct ibv_srq_init_attr}. */
@FieldOrder({"srq_context", "attr"})
public class IbvSrqInitAttr extends NativeStruct {
    public long srq_context;
    public IbvSrqAttr attr = new IbvSrqAttr();
}
