package io.rdmaactors.jna.binding;

import com.sun.jna.Structure.FieldOrder;

/** The leading fields of {@code struct ibv_cq}. */
@FieldOrder({"context", "channel", "cq_context", "handle", "cqe"})
public class IbvCq extends NativeStruct {
    public long context;
    public long channel;
    public long cq_context;
    public int handle;
    public int cqe;

    public static final int CQE = new IbvCq().offsetOf("cqe");
}
