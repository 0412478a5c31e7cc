package io.rdmaactors.jna;

import com.sun.jna.Structure.FieldOrder;

/** {@code struct ibv_sge}. */
@FieldOrder({"addr", "length", "lkey"})
public class IbvSge extends NativeStruct {
    public long addr;
    public int length;
    public int lkey;

    private static final IbvSge LAYOUT = new IbvSge();
    static final int SIZE = LAYOUT.size();
    static final int ADDR = LAYOUT.offsetOf("addr");
    static final int LENGTH = LAYOUT.offsetOf("length");
    static final int LKEY = LAYOUT.offsetOf("lkey");
}
