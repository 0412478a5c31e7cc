package io.rdmaactors.ffm.binding;

import static io.rdmaactors.ffm.binding.CLayout.array;
import static io.rdmaactors.ffm.binding.CLayout.pointer;
import static io.rdmaactors.ffm.binding.CLayout.struct;
import static io.rdmaactors.ffm.binding.CLayout.u16;
import static io.rdmaactors.ffm.binding.CLayout.u32;
import static io.rdmaactors.ffm.binding.CLayout.u64;
import static io.rdmaactors.ffm.binding.CLayout.u8;
import static io.rdmaactors.ffm.binding.CLayout.union;

import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;

/**
 * The rdma-core structs the provider reads or writes, mirrored from verbs.h and rdma_cma.h. Members
 * carry the header's names; a partial struct (the provider reads only its head) ends where the
 * provider stops reading, and {@code pad_*} arrays stand for runs it never touches.
 */
public final class Structs {

    private Structs() {
    }

    public static final StructLayout IBV_DEVICE_ATTR = struct("ibv_device_attr",
            array("fw_ver", 64, ValueLayout.JAVA_BYTE), u64("node_guid"), u64("sys_image_guid"), u64("max_mr_size"),
            u64("page_size_cap"), u32("vendor_id"), u32("vendor_part_id"), u32("hw_ver"), u32("max_qp"),
            u32("max_qp_wr"), u32("device_cap_flags"), u32("max_sge"), u32("max_sge_rd"), u32("max_cq"),
            u32("max_cqe"), u32("max_mr"), u32("max_pd"), u32("max_qp_rd_atom"), u32("max_ee_rd_atom"),
            u32("max_res_rd_atom"), u32("max_qp_init_rd_atom"), u32("max_ee_init_rd_atom"), u32("atomic_cap"),
            u32("max_ee"), u32("max_rdd"), u32("max_mw"), u32("max_raw_ipv6_qp"), u32("max_raw_ethy_qp"),
            u32("max_mcast_grp"), u32("max_mcast_qp_attach"), u32("max_total_mcast_qp_attach"), u32("max_ah"),
            u32("max_fmr"), u32("max_map_per_fmr"), u32("max_srq"), u32("max_srq_wr"), u32("max_srq_sge"),
            u16("max_pkeys"), u8("local_ca_ack_delay"), u8("phys_port_cnt"));

    public static final StructLayout IBV_PORT_ATTR = struct("ibv_port_attr",
            u32("state"), u32("max_mtu"), u32("active_mtu"), u32("gid_tbl_len"), u32("port_cap_flags"),
            u32("max_msg_sz"), u32("bad_pkey_cntr"), u32("qkey_viol_cntr"), u16("pkey_tbl_len"), u16("lid"),
            u16("sm_lid"), u8("lmc"), u8("max_vl_num"), u8("sm_sl"), u8("subnet_timeout"), u8("init_type_reply"),
            u8("active_width"), u8("active_speed"), u8("phys_state"), u8("link_layer"), u8("flags"),
            u16("port_cap_flags2"));

    /** {@code dgid} is {@code union ibv_gid}: 16 bytes, aligned as its two 64-bit halves. */
    public static final StructLayout IBV_GLOBAL_ROUTE = struct("ibv_global_route",
            array("dgid", 2, ValueLayout.JAVA_LONG), u32("flow_label"), u8("sgid_index"), u8("hop_limit"),
            u8("traffic_class"));

    public static final StructLayout IBV_AH_ATTR = struct("ibv_ah_attr",
            IBV_GLOBAL_ROUTE.withName("grh"), u16("dlid"), u8("sl"), u8("src_path_bits"), u8("static_rate"),
            u8("is_global"), u8("port_num"));

    public static final StructLayout IBV_WC = struct("ibv_wc",
            u64("wr_id"), u32("status"), u32("opcode"), u32("vendor_err"), u32("byte_len"), u32("imm_data"),
            u32("qp_num"), u32("src_qp"), u32("wc_flags"), u16("pkey_index"), u16("slid"), u8("sl"),
            u8("dlid_path_bits"));

    public static final StructLayout IBV_SGE = struct("ibv_sge", u64("addr"), u32("length"), u32("lkey"));

    public static final StructLayout IBV_RECV_WR = struct("ibv_recv_wr",
            u64("wr_id"), pointer("next"), pointer("sg_list"), u32("num_sge"));

    public static final StructLayout IBV_SEND_WR = struct("ibv_send_wr",
            u64("wr_id"), pointer("next"), pointer("sg_list"), u32("num_sge"), u32("opcode"), u32("send_flags"),
            u32("imm_data"),
            union("wr",
                    struct("rdma", u64("remote_addr"), u32("rkey")).withName("rdma"),
                    struct("atomic", u64("remote_addr"), u64("compare_add"), u64("swap"), u32("rkey"))
                            .withName("atomic"),
                    struct("ud", pointer("ah"), u32("remote_qpn"), u32("remote_qkey")).withName("ud")),
            u32("qp_type"),
            struct("bind_mw", pointer("mw"), u32("rkey"),
                    struct("ibv_mw_bind_info", pointer("mr"), u64("addr"), u64("length"), u32("mw_access_flags"))
                            .withName("bind_info")).withName("bind_mw"));

    public static final StructLayout IBV_QP_CAP = struct("ibv_qp_cap",
            u32("max_send_wr"), u32("max_recv_wr"), u32("max_send_sge"), u32("max_recv_sge"),
            u32("max_inline_data"));

    public static final StructLayout IBV_QP_INIT_ATTR = struct("ibv_qp_init_attr",
            pointer("qp_context"), pointer("send_cq"), pointer("recv_cq"), pointer("srq"),
            IBV_QP_CAP.withName("cap"), u32("qp_type"), u32("sq_sig_all"));

    public static final StructLayout IBV_QP_ATTR = struct("ibv_qp_attr",
            u32("qp_state"), u32("cur_qp_state"), u32("path_mtu"), u32("path_mig_state"), u32("qkey"),
            u32("rq_psn"), u32("sq_psn"), u32("dest_qp_num"), u32("qp_access_flags"), IBV_QP_CAP.withName("cap"),
            IBV_AH_ATTR.withName("ah_attr"), IBV_AH_ATTR.withName("alt_ah_attr"), u16("pkey_index"),
            u16("alt_pkey_index"), u8("en_sqd_async_notify"), u8("sq_draining"), u8("max_rd_atomic"),
            u8("max_dest_rd_atomic"), u8("min_rnr_timer"), u8("port_num"), u8("timeout"), u8("retry_cnt"),
            u8("rnr_retry"), u8("alt_port_num"), u8("alt_timeout"), u32("rate_limit"));

    public static final StructLayout IBV_SRQ_ATTR = struct("ibv_srq_attr",
            u32("max_wr"), u32("max_sge"), u32("srq_limit"));

    public static final StructLayout IBV_SRQ_INIT_ATTR = struct("ibv_srq_init_attr",
            pointer("srq_context"), IBV_SRQ_ATTR.withName("attr"));

    /** {@code element} is a union of pointers (cq, qp, srq, wq) and a port number. */
    public static final StructLayout IBV_ASYNC_EVENT = struct("ibv_async_event",
            u64("element"), u32("event_type"));

    /** {@code ops} names only the verbs that verbs.h inlines; the rest are padding. */
    public static final StructLayout IBV_CONTEXT = struct("ibv_context",
            pointer("device"),
            struct("ibv_context_ops", array("pad_0", 7, ValueLayout.JAVA_LONG), pointer("alloc_mw"),
                    pointer("bind_mw"), pointer("dealloc_mw"), array("pad_4", 1, ValueLayout.JAVA_LONG), pointer("poll_cq"),
                    pointer("req_notify_cq"), array("pad_1", 7, ValueLayout.JAVA_LONG), pointer("post_srq_recv"),
                    array("pad_2", 4, ValueLayout.JAVA_LONG), pointer("post_send"), pointer("post_recv"),
                    array("pad_3", 5, ValueLayout.JAVA_LONG)).withName("ops"),
            u32("cmd_fd"), u32("async_fd"), u32("num_comp_vectors"), array("pad_mutex", 5, ValueLayout.JAVA_LONG),
            pointer("abi_compat"));

    public static final StructLayout IBV_MR = struct("ibv_mr",
            pointer("context"), pointer("pd"), pointer("addr"), u64("length"), u32("handle"), u32("lkey"),
            u32("rkey"));

    public static final StructLayout IBV_MW = struct("ibv_mw",
            pointer("context"), pointer("pd"), u32("rkey"), u32("handle"), u32("type"));

    public static final StructLayout IBV_COMP_CHANNEL = struct("ibv_comp_channel",
            pointer("context"), u32("fd"), u32("refcnt"));

    /** The head of {@code struct ibv_cq}. */
    public static final StructLayout IBV_CQ = struct("ibv_cq",
            pointer("context"), pointer("channel"), pointer("cq_context"), u32("handle"), u32("cqe"));

    /** The head of {@code struct ibv_qp}. */
    public static final StructLayout IBV_QP = struct("ibv_qp",
            pointer("context"), pointer("qp_context"), pointer("pd"), pointer("send_cq"), pointer("recv_cq"),
            pointer("srq"), u32("handle"), u32("qp_num"), u32("state"), u32("qp_type"));

    public static final StructLayout RDMA_EVENT_CHANNEL = struct("rdma_event_channel", u32("fd"));

    /** The head of {@code struct rdma_cm_id}, its route's addresses as sockaddr_storage. */
    public static final StructLayout RDMA_CM_ID = struct("rdma_cm_id",
            pointer("verbs"), pointer("channel"), pointer("context"), pointer("qp"),
            struct("rdma_route",
                    struct("rdma_addr", array("src_storage", 16, ValueLayout.JAVA_LONG),
                            array("dst_storage", 16, ValueLayout.JAVA_LONG), array("pad_ib", 5, ValueLayout.JAVA_LONG))
                            .withName("addr"),
                    pointer("path_rec"), u32("num_paths")).withName("route"),
            u32("ps"), u8("port_num"));

    public static final StructLayout RDMA_CONN_PARAM = struct("rdma_conn_param",
            pointer("private_data"), u8("private_data_len"), u8("responder_resources"), u8("initiator_depth"),
            u8("flow_control"), u8("retry_count"), u8("rnr_retry_count"), u8("srq"), u32("qp_num"));

    public static final StructLayout RDMA_UD_PARAM = struct("rdma_ud_param",
            pointer("private_data"), u8("private_data_len"), IBV_AH_ATTR.withName("ah_attr"), u32("qp_num"),
            u32("qkey"));

    public static final StructLayout RDMA_CM_EVENT = struct("rdma_cm_event",
            pointer("id"), pointer("listen_id"), u32("event"), u32("status"),
            union("param", RDMA_CONN_PARAM.withName("conn"), RDMA_UD_PARAM.withName("ud")));

    public static final StructLayout RDMA_ADDRINFO = struct("rdma_addrinfo",
            u32("ai_flags"), u32("ai_family"), u32("ai_qp_type"), u32("ai_port_space"), u32("ai_src_len"),
            u32("ai_dst_len"), pointer("ai_src_addr"), pointer("ai_dst_addr"), pointer("ai_src_canonname"),
            pointer("ai_dst_canonname"), u64("ai_route_len"), pointer("ai_route"), u64("ai_connect_len"),
            pointer("ai_connect"), pointer("ai_next"));
}
