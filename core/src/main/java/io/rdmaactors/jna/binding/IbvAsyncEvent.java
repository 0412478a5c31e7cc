package io.rdmaactors.jna.binding;

import com.sun.jna.Structure.FieldOrder;

/** {@code struct ibv_async_event}: the element union is one pointer (or the port number). */
@FieldOrder({"element", "event_type"})
public class IbvAsyncEvent extends NativeStruct {
    public long element;
    public int event_type;
}
