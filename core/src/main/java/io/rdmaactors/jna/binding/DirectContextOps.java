package io.rdmaactors.jna.binding;

import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.SymbolProvider;
import java.util.Arrays;
import java.util.Map;

/**
 * Direct mapping onto one driver's ops pointers: a {@link SymbolProvider} hands JNA the pointer in
 * place of a symbol, so each call costs what a direct-mapped exported function costs (about a sixth
 * of {@code Function.invokeInt}, measured in the Soft-RoCE guest). JNA binds a class once, so only
 * the first ops table seen is bound; devices of another driver use {@link FunctionContextOps}.
 */
public final class DirectContextOps extends ContextOps {

    public static final DirectContextOps INSTANCE = new DirectContextOps();
    private static final String[] NAMES = {"poll_cq", "req_notify_cq", "post_send", "post_recv", "post_srq_recv"};
    private static long[] bound;

    private DirectContextOps() {
    }

    public static synchronized boolean bind(long[] table) {
        if (bound == null) {
            SymbolProvider ops = (handle, name, parent) -> {
                int i = Arrays.asList(NAMES).indexOf(name);
                return i >= 0 ? table[i] : parent.getSymbolAddress(handle, name, null);
            };
            NativeLibrary library = NativeLibrary.getInstance(NativeLibraries.IBVERBS,
                    Map.of(Library.OPTION_SYMBOL_PROVIDER, ops));
            Native.register(DirectContextOps.class, library);
            bound = table.clone();
        }
        return Arrays.equals(bound, table);
    }

    private static native int poll_cq(long cq, int count, long wc);

    private static native int req_notify_cq(long cq, int solicitedOnly);

    private static native int post_send(long qp, long wr, long badWr);

    private static native int post_recv(long qp, long wr, long badWr);

    private static native int post_srq_recv(long srq, long wr, long badWr);

    @Override
    public int pollCq(long cq, int count, long wc) {
        return poll_cq(cq, count, wc);
    }

    @Override
    public int reqNotifyCq(long cq, int solicitedOnly) {
        return req_notify_cq(cq, solicitedOnly);
    }

    @Override
    public int postSend(long qp, long wr, long badWr) {
        return post_send(qp, wr, badWr);
    }

    @Override
    public int postRecv(long qp, long wr, long badWr) {
        return post_recv(qp, wr, badWr);
    }

    @Override
    public int postSrqRecv(long srq, long wr, long badWr) {
        return post_srq_recv(srq, wr, badWr);
    }
}
