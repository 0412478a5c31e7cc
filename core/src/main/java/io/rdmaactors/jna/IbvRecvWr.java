package io.rdmaactors.jna;

import com.sun.jna.Structure.FieldOrder;

/** {@code struct ibv_recv_wr}; receive lists are written at these offsets into reusable memory. */
@FieldOrder({"wr_id", "next", "sg_list", "num_sge"})
public class IbvRecvWr extends NativeStruct {
    public long wr_id;
    public long next;
    public long sg_list;
    public int num_sge;

    private static final IbvRecvWr LAYOUT = new IbvRecvWr();
    static final int SIZE = LAYOUT.size();
    static final int WR_ID = LAYOUT.offsetOf("wr_id");
    static final int NEXT = LAYOUT.offsetOf("next");
    static final int SG_LIST = LAYOUT.offsetOf("sg_list");
    static final int NUM_SGE = LAYOUT.offsetOf("num_sge");
}
