package io.rdmaactors.ffm.binding;

import io.rdmaactors.jna.binding.ContextOps;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * The five verbs that verbs.h defines {@code static inline}, called through the driver's function
 * pointers in {@code ibv_context.ops} with {@link java.lang.foreign.Linker} downcalls: critical
 * (none blocks or calls back), pointers as {@code long}, nothing allocated per call. Each context
 * gets its own handles, so devices of several drivers each call their own.
 */
public final class FfmContextOps extends ContextOps {

    private static final FunctionDescriptor POLL = FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG,
            ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG);
    private static final FunctionDescriptor ARM = FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG,
            ValueLayout.JAVA_INT);
    private static final FunctionDescriptor POST = FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG,
            ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG);

    private final MethodHandle pollCq;
    private final MethodHandle reqNotifyCq;
    private final MethodHandle postSend;
    private final MethodHandle postRecv;
    private final MethodHandle postSrqRecv;

    /** The ops of the verbs context at {@code context} (an {@code ibv_context *}). */
    public FfmContextOps(long context) {
        RdmaCoreLibraries.load();
        MemorySegment ctx = MemorySegment.ofAddress(context).reinterpret(Structs.IBV_CONTEXT.byteSize());
        pollCq = RdmaCoreLibraries.downcall(pointer(ctx, "ops.poll_cq"), POLL, true);
        reqNotifyCq = RdmaCoreLibraries.downcall(pointer(ctx, "ops.req_notify_cq"), ARM, true);
        postSend = RdmaCoreLibraries.downcall(pointer(ctx, "ops.post_send"), POST, true);
        postRecv = RdmaCoreLibraries.downcall(pointer(ctx, "ops.post_recv"), POST, true);
        postSrqRecv = RdmaCoreLibraries.downcall(pointer(ctx, "ops.post_srq_recv"), POST, true);
    }

    private static long pointer(MemorySegment context, String path) {
        return context.get(ValueLayout.JAVA_LONG, CLayout.offset(Structs.IBV_CONTEXT, path));
    }

    @Override
    public int pollCq(long cq, int count, long wc) {
        try {
            return (int) pollCq.invokeExact(cq, count, wc);
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public int reqNotifyCq(long cq, int solicitedOnly) {
        try {
            return (int) reqNotifyCq.invokeExact(cq, solicitedOnly);
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public int postSend(long qp, long wr, long badWr) {
        try {
            return (int) postSend.invokeExact(qp, wr, badWr);
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public int postRecv(long qp, long wr, long badWr) {
        try {
            return (int) postRecv.invokeExact(qp, wr, badWr);
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }

    @Override
    public int postSrqRecv(long srq, long wr, long badWr) {
        try {
            return (int) postSrqRecv.invokeExact(srq, wr, badWr);
        } catch (Throwable t) {
            throw RdmaCoreLibraries.rethrow(t);
        }
    }
}
