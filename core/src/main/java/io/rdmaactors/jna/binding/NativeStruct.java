package io.rdmaactors.jna.binding;

import com.sun.jna.Pointer;
import com.sun.jna.Structure;
import java.util.List;

/** An rdma-core struct mirrored from the real headers; the layout test checks every offset. */
public abstract class NativeStruct extends Structure implements NativeLayout {

    public NativeStruct() {
    }

    public NativeStruct(Pointer p) {
        super(p);
    }

    @Override
    public List<String> fieldNames() {
        return getFieldOrder();
    }

    @Override
    public int offsetOf(String path) {
        int dot = path.indexOf('.');
        if (dot < 0) {
            return fieldOffset(path);
        }
        String head = path.substring(0, dot);
        return fieldOffset(head) + NativeLayout.nested(this, head, path.substring(dot + 1));
    }
}
