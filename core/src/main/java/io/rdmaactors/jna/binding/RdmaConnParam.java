package io.rdmaactors.jna.binding;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import com.sun.jna.Structure.FieldOrder;

/** {@code struct rdma_conn_param}. */
@FieldOrder({"private_data", "private_data_len", "responder_resources", "initiator_depth", "flow_control",
        "retry_count", "rnr_retry_count", "srq", "qp_num"})
public class RdmaConnParam extends NativeStruct {
    public long private_data;
    public byte private_data_len;
    public byte responder_resources;
    public byte initiator_depth;
    public byte flow_control;
    public byte retry_count;
    public byte rnr_retry_count;
    public byte srq;
    public int qp_num;
    /** Keeps the private data reachable while the call that reads it runs. */
    private Memory privateData;

    public void privateData(byte[] data) {
        if (data.length > 0) {
            privateData = new Memory(data.length);
            privateData.write(0, data, 0, data.length);
            private_data = Pointer.nativeValue(privateData);
        }
        private_data_len = (byte) data.length;
    }
}
