package io.rdmaactors.jna.binding;

import com.sun.jna.Structure.FieldOrder;

/** {@code struct ibv_qp_attr}, with the {@code enum ibv_qp_attr_mask} bits. */
@FieldOrder({"qp_state", "cur_qp_state", "path_mtu", "path_mig_state", "qkey", "rq_psn", "sq_psn", "dest_qp_num",
        "qp_access_flags", "cap", "ah_attr", "alt_ah_attr", "pkey_index", "alt_pkey_index", "en_sqd_async_notify",
        "sq_draining", "max_rd_atomic", "max_dest_rd_atomic", "min_rnr_timer", "port_num", "timeout", "retry_cnt",
        "rnr_retry", "alt_port_num", "alt_timeout", "rate_limit"})
public class IbvQpAttr extends NativeStruct {
    public static final int STATE = 1;
    public static final int CUR_STATE = 1 << 1;
    public static final int ACCESS_FLAGS = 1 << 3;
    public static final int PKEY_INDEX = 1 << 4;
    public static final int PORT = 1 << 5;
    public static final int QKEY = 1 << 6;
    public static final int AV = 1 << 7;
    public static final int PATH_MTU = 1 << 8;
    public static final int TIMEOUT = 1 << 9;
    public static final int RETRY_CNT = 1 << 10;
    public static final int RNR_RETRY = 1 << 11;
    public static final int RQ_PSN = 1 << 12;
    public static final int MAX_QP_RD_ATOMIC = 1 << 13;
    public static final int ALT_PATH = 1 << 14;
    public static final int MIN_RNR_TIMER = 1 << 15;
    public static final int SQ_PSN = 1 << 16;
    public static final int MAX_DEST_RD_ATOMIC = 1 << 17;
    public static final int PATH_MIG_STATE = 1 << 18;
    public static final int CAP = 1 << 19;
    public static final int DEST_QPN = 1 << 20;
    /** Every standard bit; the kernel refuses others with EOPNOTSUPP. */
    public static final int STANDARD = (1 << 21) - 1;

    public int qp_state;
    public int cur_qp_state;
    public int path_mtu;
    public int path_mig_state;
    public int qkey;
    public int rq_psn;
    public int sq_psn;
    public int dest_qp_num;
    public int qp_access_flags;
    public IbvQpCap cap = new IbvQpCap();
    public IbvAhAttr ah_attr = new IbvAhAttr();
    public IbvAhAttr alt_ah_attr = new IbvAhAttr();
    public short pkey_index;
    public short alt_pkey_index;
    public byte en_sqd_async_notify;
    public byte sq_draining;
    public byte max_rd_atomic;
    public byte max_dest_rd_atomic;
    public byte min_rnr_timer;
    public byte port_num;
    public byte timeout;
    public byte retry_cnt;
    public byte rnr_retry;
    public byte alt_port_num;
    public byte alt_timeout;
    public int rate_limit;
}
