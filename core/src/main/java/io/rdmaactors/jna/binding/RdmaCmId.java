package io.rdmaactors.jna.binding;

import com.sun.jna.Structure.FieldOrder;

/** The fields of {@code struct rdma_cm_id} up to its port (rdma_get_local_addr and rdma_get_peer_addr are inline). */
@FieldOrder({"verbs", "channel", "context", "qp", "route", "ps", "port_num"})
public class RdmaCmId extends NativeStruct {
    public long verbs;
    public long channel;
    public long context;
    public long qp;
    public Route route = new Route();
    public int ps;
    public byte port_num;

    /** {@code struct rdma_route}: its {@code rdma_addr} begins with the source and destination sockaddr storage. */
    @FieldOrder({"addr", "path_rec", "num_paths"})
    public static class Route extends NativeStruct {
        public Addr addr = new Addr();
        public long path_rec;
        public int num_paths;
    }

    /** {@code struct rdma_addr}. */
    @FieldOrder({"src_storage", "dst_storage", "pad_ib"})
    public static class Addr extends NativeStruct {
        public long[] src_storage = new long[16];
        public long[] dst_storage = new long[16];
        public long[] pad_ib = new long[5];
    }

    private static final RdmaCmId LAYOUT = new RdmaCmId();
    public static final int VERBS = LAYOUT.offsetOf("verbs");
    public static final int QP = LAYOUT.offsetOf("qp");
    public static final int SRC_ADDR = LAYOUT.offsetOf("route.addr.src_storage");
    public static final int DST_ADDR = LAYOUT.offsetOf("route.addr.dst_storage");
    public static final int PS = LAYOUT.offsetOf("ps");
    public static final int PORT_NUM = LAYOUT.offsetOf("port_num");
}
