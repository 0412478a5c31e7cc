package io.rdmaactors.jna.binding;

import com.sun.jna.Pointer;
import com.sun.jna.Structure.FieldOrder;

/** {@code struct rdma_cm_event}: the param union holds connection or UD parameters. */
@FieldOrder({"id", "listen_id", "event", "status", "param"})
public class RdmaCmEvent extends NativeStruct {
    public long id;
    public long listen_id;
    public int event;
    public int status;
    public Param param = new Param();

    /** The {@code param} union. */
    @FieldOrder({"conn", "ud"})
    public static class Param extends NativeUnion {
        public RdmaConnParam conn = new RdmaConnParam();
        public RdmaUdParam ud = new RdmaUdParam();
    }

    public static final int ID = new RdmaCmEvent().offsetOf("id");

    public RdmaCmEvent() {
    }

    public RdmaCmEvent(Pointer p) {
        super(p);
    }
}
