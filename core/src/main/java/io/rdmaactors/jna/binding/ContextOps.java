package io.rdmaactors.jna.binding;

import com.sun.jna.Pointer;

/**
 * The five verbs that verbs.h defines {@code static inline}: they have no exported symbol and call
 * through the function pointers in {@code ibv_context.ops}.
 */
public abstract class ContextOps {

    public abstract int pollCq(long cq, int count, long wc);

    public abstract int reqNotifyCq(long cq, int solicitedOnly);

    public abstract int postSend(long qp, long wr, long badWr);

    public abstract int postRecv(long qp, long wr, long badWr);

    public abstract int postSrqRecv(long srq, long wr, long badWr);

    /** Direct-mapped calls for the first driver seen (the common case), generic calls otherwise. */
    public static ContextOps of(long context) {
        Pointer ctx = new Pointer(context);
        long[] table = {
            Pointer.nativeValue(ctx.getPointer(IbvContext.POLL_CQ)),
            Pointer.nativeValue(ctx.getPointer(IbvContext.REQ_NOTIFY_CQ)),
            Pointer.nativeValue(ctx.getPointer(IbvContext.POST_SEND)),
            Pointer.nativeValue(ctx.getPointer(IbvContext.POST_RECV)),
            Pointer.nativeValue(ctx.getPointer(IbvContext.POST_SRQ_RECV)),
        };
        return DirectContextOps.bind(table) ? DirectContextOps.INSTANCE : new FunctionContextOps(table);
    }
}
