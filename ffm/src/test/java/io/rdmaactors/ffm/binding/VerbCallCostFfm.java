package io.rdmaactors.ffm.binding;

import com.sun.jna.Native;
import com.sun.jna.Platform;
import io.rdmaactors.jna.binding.ContextOps;
import io.rdmaactors.jna.binding.DirectContextOps;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * JMH: what one call into an inline verb costs through FFM ({@link FfmContextOps}) against the jna
 * provider's way (JNA direct mapping bound to the same ops pointers), in one run: {@code poll_cq}
 * on an empty CQ, {@code req_notify_cq}, and a signaled 8-byte RDMA WRITE posted and polled to its
 * completion (the device's round trip included), beside each binding's empty call (libc's {@code abs}).
 * Needs an RDMA device and Java 22+: {@code native/ffm-call-cost.sh} in the Soft-RoCE guest.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = {"-XX:+UseSerialGC", "--enable-native-access=ALL-UNNAMED"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class VerbCallCostFfm {

    /** libc's abs through JNA direct mapping: the floor of a JNA call. */
    static final class JnaEmpty {
        static native int abs(int x);

        static {
            Native.register(JnaEmpty.class, Platform.C_LIBRARY_NAME);
        }
    }

    private static final int WR_RDMA_WRITE = 0;
    private static final int SEND_SIGNALED = 2;
    private static final MethodHandle FFM_ABS = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().find("abs").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT), Linker.Option.critical(false));

    private RcPair pair;
    private Arena arena;
    private long wc;
    private long write;
    private long badWr;
    private ContextOps jna;
    private ContextOps ffm;
    private int counter;

    @Setup(Level.Trial)
    public void open() throws Exception {
        pair = new RcPair();
        arena = Arena.ofConfined();
        wc = arena.allocate(Structs.IBV_WC).address();
        badWr = arena.allocate(ValueLayout.JAVA_LONG).address();
        MemorySegment sge = arena.allocate(Structs.IBV_SGE);
        sge.set(ValueLayout.JAVA_LONG, CLayout.offset(Structs.IBV_SGE, "addr"), pair.source.address());
        sge.set(ValueLayout.JAVA_INT, CLayout.offset(Structs.IBV_SGE, "length"), 8);
        sge.set(ValueLayout.JAVA_INT, CLayout.offset(Structs.IBV_SGE, "lkey"), pair.source.lkey());
        MemorySegment wr = arena.allocate(Structs.IBV_SEND_WR);
        wr.set(ValueLayout.JAVA_LONG, CLayout.offset(Structs.IBV_SEND_WR, "sg_list"), sge.address());
        wr.set(ValueLayout.JAVA_INT, CLayout.offset(Structs.IBV_SEND_WR, "num_sge"), 1);
        wr.set(ValueLayout.JAVA_INT, CLayout.offset(Structs.IBV_SEND_WR, "opcode"), WR_RDMA_WRITE);
        wr.set(ValueLayout.JAVA_INT, CLayout.offset(Structs.IBV_SEND_WR, "send_flags"), SEND_SIGNALED);
        wr.set(ValueLayout.JAVA_LONG, CLayout.offset(Structs.IBV_SEND_WR, "wr.rdma.remote_addr"), pair.target.address());
        wr.set(ValueLayout.JAVA_INT, CLayout.offset(Structs.IBV_SEND_WR, "wr.rdma.rkey"), pair.target.rkey());
        write = wr.address();
        jna = ContextOps.of(pair.clientContext);
        if (!(jna instanceof DirectContextOps)) {
            throw new IllegalStateException("the device's ops table is not the direct-mapped one");
        }
        ffm = new FfmContextOps(pair.clientContext);
    }

    @TearDown(Level.Trial)
    public void close() {
        arena.close();
        pair.close();
    }

    @Benchmark
    public int emptyCallJna() {
        return JnaEmpty.abs(--counter);
    }

    @Benchmark
    public int emptyCallFfm() throws Throwable {
        return (int) FFM_ABS.invokeExact(--counter);
    }

    @Benchmark
    public int pollCqJna() {
        return jna.pollCq(pair.clientCq, 1, wc);
    }

    @Benchmark
    public int pollCqFfm() {
        return ffm.pollCq(pair.clientCq, 1, wc);
    }

    @Benchmark
    public int reqNotifyCqJna() {
        return jna.reqNotifyCq(pair.clientCq, 0);
    }

    @Benchmark
    public int reqNotifyCqFfm() {
        return ffm.reqNotifyCq(pair.clientCq, 0);
    }

    @Benchmark
    public int postWritePollJna() {
        return writeAndPoll(jna);
    }

    @Benchmark
    public int postWritePollFfm() {
        return writeAndPoll(ffm);
    }

    /** Posts the WRITE and polls until its completion; a failed post or completion fails the run. */
    private int writeAndPoll(ContextOps ops) {
        int rc = ops.postSend(pair.clientQp, write, badWr);
        if (rc != 0) {
            throw new IllegalStateException("post_send: errno " + rc);
        }
        int polls = 0;
        while (ops.pollCq(pair.clientCq, 1, wc) == 0) {
            polls++;
        }
        if (MemorySegment.ofAddress(wc).reinterpret(Structs.IBV_WC.byteSize())
                .get(ValueLayout.JAVA_INT, CLayout.offset(Structs.IBV_WC, "status")) != 0) {
            throw new IllegalStateException("the WRITE completed in error");
        }
        return polls;
    }
}
