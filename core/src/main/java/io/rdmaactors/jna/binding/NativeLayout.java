package io.rdmaactors.jna.binding;

import java.util.List;

/** A struct or union whose field offsets can be named by path ({@code wr.rdma.rkey}). */
public interface NativeLayout {

    public int offsetOf(String path);

    /** The fields in declaration order, as the header declares them. */
    public List<String> fieldNames();

    public int size();

    /** Resolves the rest of a path inside the nested layout held by {@code field}. */
    public static int nested(Object holder, String field, String rest) {
        try {
            Object value = holder.getClass().getField(field).get(holder);
            return ((NativeLayout) value).offsetOf(rest);
        } catch (ReflectiveOperationException | ClassCastException e) {
            throw new IllegalArgumentException("no nested layout " + field + " in " + holder.getClass(), e);
        }
    }
}
