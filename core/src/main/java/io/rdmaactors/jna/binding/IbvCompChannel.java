package io.rdmaactors.jna.binding;

import com.sun.jna.Structure.FieldOrder;

/** {@code struct ibv_comp_channel}. */
@FieldOrder({"context", "fd", "refcnt"})
public class IbvCompChannel extends NativeStruct {
    public long context;
    public int fd;
    public int refcnt;

    public static final int FD = new IbvCompChannel().offsetOf("fd");
}
