package io.rdmaactors.jna;

import com.sun.jna.Structure.FieldOrder;

/** {@code struct ibv_global_route}. */
@FieldOrder({"dgid", "flow_label", "sgid_index", "hop_limit", "traffic_class"})
public class IbvGlobalRoute extends NativeStruct {
    public byte[] dgid = new byte[16];
    public int flow_label;
    public byte sgid_index;
    public byte hop_limit;
    public byte traffic_class;
}
