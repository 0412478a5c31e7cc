package io.rdmaactors.jna;

import com.sun.jna.Structure.FieldOrder;

/** {@code struct ibv_wc}; the CQ poller reads completions at these offsets from a reusable array. */
@FieldOrder({"wr_id", "status", "opcode", "vendor_err", "byte_len", "imm_data", "qp_num", "src_qp", "wc_flags",
        "pkey_index", "slid", "sl", "dlid_path_bits"})
public class IbvWc extends NativeStruct {
    public long wr_id;
    public int status;
    public int opcode;
    public int vendor_err;
    public int byte_len;
    public int imm_data;
    public int qp_num;
    public int src_qp;
    public int wc_flags;
    public short pkey_index;
    public short slid;
    public byte sl;
    public byte dlid_path_bits;

    private static final IbvWc LAYOUT = new IbvWc();
    static final int SIZE = LAYOUT.size();
    static final int WR_ID = LAYOUT.offsetOf("wr_id");
    static final int STATUS = LAYOUT.offsetOf("status");
    static final int OPCODE = LAYOUT.offsetOf("opcode");
    static final int VENDOR_ERR = LAYOUT.offsetOf("vendor_err");
    static final int BYTE_LEN = LAYOUT.offsetOf("byte_len");
    static final int IMM_DATA = LAYOUT.offsetOf("imm_data");
    static final int QP_NUM = LAYOUT.offsetOf("qp_num");
    static final int SRC_QP = LAYOUT.offsetOf("src_qp");
    static final int WC_FLAGS = LAYOUT.offsetOf("wc_flags");
}
