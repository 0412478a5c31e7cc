package io.rdmaactors.jna.binding;

import com.sun.jna.Structure.FieldOrder;

/** {@code struct ibv_mr}. */
@FieldOrder({"context", "pd", "addr", "length", "handle", "lkey", "rkey"})
public class IbvMr extends NativeStruct {
    public long context;
    public long pd;
    public long addr;
    public long length;
    public int handle;
    public int lkey;
    public int rkey;

    private static final IbvMr LAYOUT = new IbvMr();
    public static final int LKEY = LAYOUT.offsetOf("lkey");
    public static final int RKEY = LAYOUT.offsetOf("rkey");
}
