package io.rdmaactors.jna.binding;

import com.sun.jna.Structure.FieldOrder;

/** {@code struct rdma_addrinfo}: the hints given to rdma_getaddrinfo, and each answer's layout. */
@FieldOrder({"ai_flags", "ai_family", "ai_qp_type", "ai_port_space", "ai_src_len", "ai_dst_len", "ai_src_addr",
        "ai_dst_addr", "ai_src_canonname", "ai_dst_canonname", "ai_route_len", "ai_route", "ai_connect_len",
        "ai_connect", "ai_next"})
public class RdmaAddrinfo extends NativeStruct {
    public static final int RAI_PASSIVE = 1;
    public static final int AF_INET = 2;

    public int ai_flags;
    public int ai_family;
    public int ai_qp_type;
    public int ai_port_space;
    public int ai_src_len;
    public int ai_dst_len;
    public long ai_src_addr;
    public long ai_dst_addr;
    public long ai_src_canonname;
    public long ai_dst_canonname;
    public long ai_route_len;
    public long ai_route;
    public long ai_connect_len;
    public long ai_connect;
    public long ai_next;

    private static final RdmaAddrinfo LAYOUT = new RdmaAddrinfo();
    public static final int QP_TYPE = LAYOUT.offsetOf("ai_qp_type");
    public static final int PORT_SPACE = LAYOUT.offsetOf("ai_port_space");
    public static final int SRC_ADDR = LAYOUT.offsetOf("ai_src_addr");
    public static final int DST_ADDR = LAYOUT.offsetOf("ai_dst_addr");
    public static final int NEXT = LAYOUT.offsetOf("ai_next");
}
