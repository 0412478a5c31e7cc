package io.rdmaactors.jna.binding;

import com.sun.jna.Structure.FieldOrder;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** {@code struct ibv_global_route}. */
@FieldOrder({"dgid", "flow_label", "sgid_index", "hop_limit", "traffic_class"})
public class IbvGlobalRoute extends NativeStruct {
    /** {@code union ibv_gid}: 16 raw bytes with the alignment of its two 64-bit halves. */
    public long[] dgid = new long[2];
    public int flow_label;
    public byte sgid_index;
    public byte hop_limit;
    public byte traffic_class;

    public void gid(byte[] gid) {
        ByteBuffer b = ByteBuffer.wrap(gid).order(ByteOrder.nativeOrder());
        dgid = new long[] {b.getLong(0), b.getLong(8)};
    }

    public byte[] gid() {
        return ByteBuffer.allocate(16).order(ByteOrder.nativeOrder()).putLong(dgid[0]).putLong(dgid[1]).array();
    }
}
