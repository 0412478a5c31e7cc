package io.rdmaactors.jna.binding;

import com.sun.jna.Structure.FieldOrder;

/** {@code struct ibv_mw}. */
@FieldOrder({"context", "pd", "rkey", "handle", "type"})
public class IbvMw extends NativeStruct {
    public long context;
    public long pd;
    public int rkey;
    public int handle;
    public int type;

    private static final IbvMw LAYOUT = new IbvMw();
    public static final int RKEY = LAYOUT.offsetOf("rkey");
}
