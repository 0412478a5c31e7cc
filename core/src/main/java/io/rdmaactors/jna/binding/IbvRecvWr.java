package io.rdmaactors.jna.binding;

import com.sun.jna.Structure.FieldOrder;

/** {@code struct ibv_recv_wr}; receive lists are written at these offsets into reusable memory. */
@FieldOrder({"wr_id", "next", "sg_list", "num_sge"})
public class IbvRecvWr extends NativeStruct {
    public long wr_id;
    public long next;
    public long sg_list;
    public int num_sge;

    private static final IbvRecvWr LAYOUT = new IbvRecvWr();
    public static final int SIZE = LAYOUT.size();
    public static final int WR_ID = LAYOUT.offsetOf("wr_id");
    public static final int NEXT = LAYOUT.offsetOf("next");
    public static final int SG_LIST = LAYOUT.offsetOf("sg_list");
    public static final int NUM_SGE = LAYOUT.offsetOf("num_sge");
}
