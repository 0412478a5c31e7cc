package io.rdmaactors.jna.binding;

import com.sun.jna.Function;
import com.sun.jna.Pointer;

/** Generic calls through an ops table other than the direct-mapped one (several drivers in one process). */
public final class FunctionContextOps extends ContextOps {

    private final Function pollCq;
    private final Function reqNotifyCq;
    private final Function postSend;
    private final Function postRecv;
    private final Function postSrqRecv;

    public FunctionContextOps(long[] table) {
        pollCq = Function.getFunction(new Pointer(table[0]));
        reqNotifyCq = Function.getFunction(new Pointer(table[1]));
        postSend = Function.getFunction(new Pointer(table[2]));
        postRecv = Function.getFunction(new Pointer(table[3]));
        postSrqRecv = Function.getFunction(new Pointer(table[4]));
    }

    @Override
    public int pollCq(long cq, int count, long wc) {
        return pollCq.invokeInt(new Object[] {new Pointer(cq), count, new Pointer(wc)});
    }

    @Override
    public int reqNotifyCq(long cq, int solicitedOnly) {
        return reqNotifyCq.invokeInt(new Object[] {new Pointer(cq), solicitedOnly});
    }

    @Override
    public int postSend(long qp, long wr, long badWr) {
        return postSend.invokeInt(new Object[] {new Pointer(qp), new Pointer(wr), new Pointer(badWr)});
    }

    @Override
    public int postRecv(long qp, long wr, long badWr) {
        return postRecv.invokeInt(new Object[] {new Pointer(qp), new Pointer(wr), new Pointer(badWr)});
    }

    @Override
    public int postSrqRecv(long srq, long wr, long badWr) {
        return postSrqRecv.invokeInt(new Object[] {new Pointer(srq), new Pointer(wr), new Pointer(badWr)});
    }
}
