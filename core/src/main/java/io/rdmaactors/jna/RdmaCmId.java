package io.rdmaactors.jna;

import com.sun.jna.Structure.FieldOrder;

/** The fields of {@code struct rdma_cm_id} up to its port; the route is read with rdma_get_*_addr. */
@FieldOrder({"verbs", "channel", "context", "qp", "pad_route", "ps", "port_num"})
public class RdmaCmId extends NativeStruct {
    public long verbs;
    public long channel;
    public long context;
    public long qp;
    public long[] pad_route = new long[39];
    public int ps;
    public byte port_num;

    private static final RdmaCmId LAYOUT = new RdmaCmId();
    static final int VERBS = LAYOUT.offsetOf("verbs");
    static final int QP = LAYOUT.offsetOf("qp");
    static final int PS = LAYOUT.offsetOf("ps");
    static final int PORT_NUM = LAYOUT.offsetOf("port_num");
}
