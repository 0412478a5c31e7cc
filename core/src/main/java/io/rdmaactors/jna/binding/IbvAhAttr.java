package io.rdmaactors.jna.binding;

import com.sun.jna.Pointer;
import com.sun.jna.Structure.FieldOrder;
import io.rdmaactors.cm.AddressVector;

/** {@code struct ibv_ah_attr}: an address vector. */
@FieldOrder({"grh", "dlid", "sl", "src_path_bits", "static_rate", "is_global", "port_num"})
public class IbvAhAttr extends NativeStruct {
    public IbvGlobalRoute grh = new IbvGlobalRoute();
    public short dlid;
    public byte sl;
    public byte src_path_bits;
    public byte static_rate;
    public byte is_global;
    public byte port_num;

    public IbvAhAttr() {
    }

    public IbvAhAttr(Pointer p) {
        super(p);
        read();
    }

    public void set(AddressVector av) {
        grh.gid(av.dgid());
        grh.flow_label = av.flowLabel();
        grh.sgid_index = (byte) av.sgidIndex();
        grh.hop_limit = (byte) av.hopLimit();
        grh.traffic_class = (byte) av.trafficClass();
        dlid = (short) av.dlid();
        sl = (byte) av.serviceLevel();
        is_global = (byte) (av.global() ? 1 : 0);
        port_num = (byte) av.portNum();
    }

    public AddressVector toAddressVector() {
        return new AddressVector(grh.gid(), Short.toUnsignedInt(dlid), sl, Byte.toUnsignedInt(port_num),
                Byte.toUnsignedInt(grh.hop_limit), Byte.toUnsignedInt(grh.traffic_class), grh.flow_label,
                Byte.toUnsignedInt(grh.sgid_index), is_global != 0);
    }
}
