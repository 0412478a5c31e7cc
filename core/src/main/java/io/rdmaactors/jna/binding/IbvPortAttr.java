package io.rdmaactors.jna.binding;

import com.sun.jna.Structure.FieldOrder;

/** {@code struct ibv_port_attr}. */
@FieldOrder({"state", "max_mtu", "active_mtu", "gid_tbl_len", "port_cap_flags", "max_msg_sz", "bad_pkey_cntr",
        "qkey_viol_cntr", "pkey_tbl_len", "lid", "sm_lid", "lmc", "max_vl_num", "sm_sl", "subnet_timeout",
        "init_type_reply", "active_width", "active_speed", "phys_state", "link_layer", "flags", "port_cap_flags2"})
public class IbvPortAttr extends NativeStruct {
    public int state;
    public int max_mtu;
    public int active_mtu;
    public int gid_tbl_len;
    public int port_cap_flags;
    public int max_msg_sz;
    public int bad_pkey_cntr;
    public int qkey_viol_cntr;
    public short pkey_tbl_len;
    public short lid;
    public short sm_lid;
    public byte lmc;
    public byte max_vl_num;
    public byte sm_sl;
    public byte subnet_timeout;
    public byte init_type_reply;
    public byte active_width;
    public byte active_speed;
    public byte phys_state;
    public byte link_layer;
    public byte flags;
    public short port_cap_flags2;
}
