package io.rdmaactors.jna.binding;

import com.sun.jna.Union;
import java.util.List;

/** An rdma-core union mirrored from the real headers. */
public abstract class NativeUnion extends Union implements NativeLayout {

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
