package io.rdmaactors.jna.binding;

import com.sun.jna.Structure.FieldOrder;

/** {@code struct rdma_event_channel}. */
@FieldOrder({"fd"})
public class RdmaEventChannel extends NativeStruct {
    public int fd;

    public static final int FD = new RdmaEventChannel().offsetOf("fd");
}
