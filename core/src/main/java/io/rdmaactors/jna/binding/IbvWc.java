package io.rdmaactors.jna.binding;

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
    public static final int SIZE = LAYOUT.size();
    public static final int WR_ID = LAYOUT.offsetOf("wr_id");
    public static final int STATUS = LAYOUT.offsetOf("status");
    public static final int OPCODE = LAYOUT.offsetOf("opcode");
    public static final int VENDOR_ERR = LAYOUT.offsetOf("vendor_err");
    public static final int BYTE_LEN = LAYOUT.offsetOf("byte_len");
    public static final int IMM_DATA = LAYOUT.offsetOf("imm_data");
    public static final int QP_NUM = LAYOUT.offsetOf("qp_num");
    public static final int SRC_QP = LAYOUT.offsetOf("src_qp");
    public static final int WC_FLAGS = LAYOUT.offsetOf("wc_flags");
}
