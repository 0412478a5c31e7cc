package io.rdmaactors.jna;

import java.util.List;

/** A struct or union whose field offsets can be named by path ({@code wr.rdma.rkey}). */
interface NativeLayout {

    int offsetOf(String path);

    /** The fields in declaration order, as the header declares them. */
    List<String> fieldNames();

    int size();

    /** Resolves the rest of a path inside the nested layout held by {@code field}. */
    static int nested(Object holder, String field, String rest) {
        try {
            Object value = holder.getClass().getField(field).get(holder);
            return ((NativeLayout) value).offsetOf(rest);
        } catch (ReflectiveOperationException | ClassCastException e) {
            throw new IllegalArgumentException("no nested layout " + field + " in " + holder.getClass(), e);
        }
    }
}
