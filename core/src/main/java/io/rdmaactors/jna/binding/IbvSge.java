package io.rdmaactors.jna.binding;

import com.sun.jna.Structure.FieldOrder;

/** {@code struct ibv_sge}. */
@FieldOrder({"addr", "length", "lkey"})
public class IbvSge extends NativeStruct {
    public long addr;
    public int length;
    public int lkey;

    private static final IbvSge LAYOUT = new IbvSge();
    public static final int SIZE = LAYOUT.size();
    public static final int ADDR = LAYOUT.offsetOf("addr");
    public static final int LENGTH = LAYOUT.offsetOf("length");
    public static final int LKEY = LAYOUT.offsetOf("lkey");
}
