package io.rdmaactors.jna.binding;

import com.sun.jna.Structure.FieldOrder;

/** {@code struct ibv_send_wr}; send lists are written at these offsets into reusable memory. */
@FieldOrder({"wr_id", "next", "sg_list", "num_sge", "opcode", "send_flags", "imm_data", "wr", "qp_type",
        "bind_mw"})
public class IbvSendWr extends NativeStruct {
    public long wr_id;
    public long next;
    public long sg_list;
    public int num_sge;
    public int opcode;
    public int send_flags;
    public int imm_data;
    public Wr wr = new Wr();
    public int qp_type;
    /** The bind_mw member of the bind_mw/tso union (tso is never used here). */
    public BindMw bind_mw = new BindMw();

    /** The {@code wr} union: RDMA, atomic or UD addressing. */
    @FieldOrder({"rdma", "atomic", "ud"})
    public static class Wr extends NativeUnion {
        public Rdma rdma = new Rdma();
        public Atomic atomic = new Atomic();
        public Ud ud = new Ud();
    }

    @FieldOrder({"remote_addr", "rkey"})
    public static class Rdma extends NativeStruct {
        public long remote_addr;
        public int rkey;
    }

    @FieldOrder({"remote_addr", "compare_add", "swap", "rkey"})
    public static class Atomic extends NativeStruct {
        public long remote_addr;
        public long compare_add;
        public long swap;
        public int rkey;
    }

    @FieldOrder({"ah", "remote_qpn", "remote_qkey"})
    public static class Ud extends NativeStruct {
        public long ah;
        public int remote_qpn;
        public int remote_qkey;
    }

    @FieldOrder({"mw", "rkey", "bind_info"})
    public static class BindMw extends NativeStruct {
        public long mw;
        public int rkey;
        public BindInfo bind_info = new BindInfo();
    }

    /** {@code struct ibv_mw_bind_info}. */
    @FieldOrder({"mr", "addr", "length", "mw_access_flags"})
    public static class BindInfo extends NativeStruct {
        public long mr;
        public long addr;
        public long length;
        public int mw_access_flags;
    }

    private static final IbvSendWr LAYOUT = new IbvSendWr();
    public static final int SIZE = LAYOUT.size();
    public static final int WR_ID = LAYOUT.offsetOf("wr_id");
    public static final int NEXT = LAYOUT.offsetOf("next");
    public static final int SG_LIST = LAYOUT.offsetOf("sg_list");
    public static final int NUM_SGE = LAYOUT.offsetOf("num_sge");
    public static final int OPCODE = LAYOUT.offsetOf("opcode");
    public static final int SEND_FLAGS = LAYOUT.offsetOf("send_flags");
    public static final int IMM_DATA = LAYOUT.offsetOf("imm_data");
    public static final int RDMA_REMOTE_ADDR = LAYOUT.offsetOf("wr.rdma.remote_addr");
    public static final int RDMA_RKEY = LAYOUT.offsetOf("wr.rdma.rkey");
    public static final int ATOMIC_REMOTE_ADDR = LAYOUT.offsetOf("wr.atomic.remote_addr");
    public static final int ATOMIC_COMPARE_ADD = LAYOUT.offsetOf("wr.atomic.compare_add");
    public static final int ATOMIC_SWAP = LAYOUT.offsetOf("wr.atomic.swap");
    public static final int ATOMIC_RKEY = LAYOUT.offsetOf("wr.atomic.rkey");
    public static final int UD_AH = LAYOUT.offsetOf("wr.ud.ah");
    public static final int UD_REMOTE_QPN = LAYOUT.offsetOf("wr.ud.remote_qpn");
    public static final int UD_REMOTE_QKEY = LAYOUT.offsetOf("wr.ud.remote_qkey");
    public static final int BIND_MW = LAYOUT.offsetOf("bind_mw.mw");
    public static final int BIND_RKEY = LAYOUT.offsetOf("bind_mw.rkey");
    public static final int BIND_MR = LAYOUT.offsetOf("bind_mw.bind_info.mr");
    public static final int BIND_ADDR = LAYOUT.offsetOf("bind_mw.bind_info.addr");
    public static final int BIND_LENGTH = LAYOUT.offsetOf("bind_mw.bind_info.length");
    public static final int BIND_ACCESS = LAYOUT.offsetOf("bind_mw.bind_info.mw_access_flags");
}
