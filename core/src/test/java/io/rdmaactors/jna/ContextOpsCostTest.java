package io.rdmaactors.jna;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Platform;
import com.sun.jna.Pointer;
import io.rdmaactors.verbs.CompletionQueue;
import io.rdmaactors.verbs.Fabric;
import org.junit.jupiter.api.Test;

/**
 * What an inline verb costs through the ops pointer: direct-mapped (the provider's way) against
 * {@code Function.invokeInt} and against an empty direct-mapped call ({@code abs}). Prints the
 * numbers; asserts only that the direct path is the cheaper one.
 */
class ContextOpsCostTest {

    private static final int CALLS = 20_000;

    /** An empty native call for the baseline. */
    static final class Empty {
        static native int abs(int x);

        static {
            Native.register(Empty.class, Platform.C_LIBRARY_NAME);
        }
    }

    @Test
    void directMappedOpsCostLikeAnExportedCall() {
        try (Fabric fabric = JnaFabrics.openOrSkip()) {
            JnaDevice device = (JnaDevice) fabric.devices().get(0);
            CompletionQueue cq = device.createCompletionQueue(16, null);
            long cqPointer = cq.handle();
            Pointer ctx = new Pointer(device.context);
            ContextOps direct = ContextOps.of(device.context);
            ContextOps generic = new FunctionContextOps(new long[] {
                Pointer.nativeValue(ctx.getPointer(IbvContext.POLL_CQ)),
                Pointer.nativeValue(ctx.getPointer(IbvContext.REQ_NOTIFY_CQ)),
                Pointer.nativeValue(ctx.getPointer(IbvContext.POST_SEND)),
                Pointer.nativeValue(ctx.getPointer(IbvContext.POST_RECV)),
                Pointer.nativeValue(ctx.getPointer(IbvContext.POST_SRQ_RECV))});
            Memory wc = new Memory(IbvWc.SIZE);
            long wcPointer = Pointer.nativeValue(wc);
            double empty = 0;
            double viaDirect = 0;
            double viaFunction = 0;
            for (int round = 0; round < 2; round++) {
                long t0 = System.nanoTime();
                for (int i = 0; i < CALLS; i++) {
                    Empty.abs(-i);
                }
                long t1 = System.nanoTime();
                for (int i = 0; i < CALLS; i++) {
                    assertEquals(0, direct.pollCq(cqPointer, 1, wcPointer));
                }
                long t2 = System.nanoTime();
                for (int i = 0; i < CALLS; i++) {
                    assertEquals(0, generic.pollCq(cqPointer, 1, wcPointer));
                }
                long t3 = System.nanoTime();
                empty = (t1 - t0) / (double) CALLS;
                viaDirect = (t2 - t1) / (double) CALLS;
                viaFunction = (t3 - t2) / (double) CALLS;
            }
            System.out.printf("ibv_poll_cq on an empty CQ, ns/call: direct-mapped ops pointer %.0f, "
                    + "Function.invokeInt %.0f, empty direct-mapped call %.0f (%s)%n", viaDirect, viaFunction, empty,
                    direct.getClass().getSimpleName());
            assertTrue(direct instanceof DirectContextOps);
            assertTrue(viaDirect < viaFunction, "the direct path should be the cheaper one");
            cq.close();
        }
    }
}
