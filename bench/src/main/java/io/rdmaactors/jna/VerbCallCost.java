package io.rdmaactors.jna;

import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Platform;
import com.sun.jna.Pointer;
import io.rdmaactors.bench.BenchSupport;
import io.rdmaactors.cm.CmEvent;
import io.rdmaactors.jna.binding.ContextOps;
import io.rdmaactors.jna.binding.DirectContextOps;
import io.rdmaactors.jna.binding.FunctionContextOps;
import io.rdmaactors.jna.binding.IbvContext;
import io.rdmaactors.jna.binding.IbvWc;
import io.rdmaactors.verbs.Access;
import io.rdmaactors.verbs.CmId;
import io.rdmaactors.verbs.CompletionQueue;
import io.rdmaactors.verbs.ConnectionParameters;
import io.rdmaactors.verbs.EventChannel;
import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.PortSpace;
import io.rdmaactors.verbs.ProtectionDomain;
import io.rdmaactors.verbs.QpInitAttributes;
import io.rdmaactors.verbs.QueuePair;
import io.rdmaactors.verbs.SendFlag;
import io.rdmaactors.verbs.SendWorkRequest;
import io.rdmaactors.verbs.WorkCompletion;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Set;
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
 * JMH: what one call into a static-inline verb costs on the jna provider, against an empty JNA
 * call. The inline verbs (ibv_post_send, ibv_poll_cq, ...) have no exported symbol; the provider
 * calls the driver's function pointers in {@code ibv_context.ops} through a direct-mapped native
 * method bound to those addresses. The alternatives are {@code com.sun.jna.Function} on the same
 * pointers and a C shim exporting wrappers, whose call would cost what the empty direct-mapped
 * call costs. Needs an RDMA device (the Soft-RoCE guest: {@code native/verb-call-cost.sh}).
 *
 * <p>In package {@code io.rdmaactors.jna} for the provider's package-private ops table.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = {"-XX:+UseSerialGC"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class VerbCallCost {

    private static final Duration STEP = Duration.ofSeconds(30);
    private static final String ADDRESS = System.getProperty("rdma-actors.test.address", "10.0.2.15");

    /** An exported libc function that does next to nothing: the floor of a direct-mapped call. */
    static final class Empty {
        static native int abs(int x);

        static {
            Native.register(Empty.class, Platform.C_LIBRARY_NAME);
        }
    }

    private Fabric fabric;
    private EventChannel serverEvents;
    private EventChannel clientEvents;
    private CmId listener;
    private CmId client;
    private CmId server;
    private ProtectionDomain clientPd;
    private ProtectionDomain serverPd;
    private CompletionQueue clientCq;
    private CompletionQueue serverCq;
    private CompletionQueue idleCq;
    private QueuePair clientQp;
    private QueuePair serverQp;
    private MemoryRegion source;
    private MemoryRegion target;
    private Memory wc;
    private long idleCqPointer;
    private long wcPointer;
    private ContextOps direct;
    private ContextOps function;
    private SendWorkRequest[] write;
    private final WorkCompletion[] completions = new WorkCompletion[1];
    private int counter;

    /** A connected RC pair over the CM on the device's address, plus an idle CQ to poll. */
    @Setup(Level.Trial)
    public void connect() throws Exception {
        fabric = Fabric.open("jna");
        serverEvents = fabric.createEventChannel();
        clientEvents = fabric.createEventChannel();
        listener = fabric.createCmId(serverEvents, PortSpace.TCP);
        listener.bind(new InetSocketAddress(ADDRESS, 0));
        listener.listen(1);
        client = fabric.createCmId(clientEvents, PortSpace.TCP);
        client.resolveAddress(null, listener.localAddress(), STEP);
        BenchSupport.expect(clientEvents, CmEvent.AddrResolved.class, STEP);
        client.resolveRoute(STEP);
        BenchSupport.expect(clientEvents, CmEvent.RouteResolved.class, STEP);
        clientPd = client.device().allocateProtectionDomain();
        clientCq = client.device().createCompletionQueue(16, null);
        clientQp = client.createQueuePair(clientPd, QpInitAttributes.rc(clientCq, 16, 1));
        source = clientPd.register(ByteBuffer.allocateDirect(8));
        client.connect(ConnectionParameters.of(new byte[0]));
        CmEvent.ConnectRequest request = BenchSupport.expect(serverEvents, CmEvent.ConnectRequest.class, STEP);
        server = serverEvents.cmId(request.id());
        serverPd = server.device().allocateProtectionDomain();
        serverCq = server.device().createCompletionQueue(16, null);
        serverQp = server.createQueuePair(serverPd, QpInitAttributes.rc(serverCq, 1, 1));
        target = serverPd.register(ByteBuffer.allocateDirect(8), Set.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
        server.accept(ConnectionParameters.of(new byte[0]));
        // the client first: its rdma_get_cm_event sends the RTU that establishes the server
        BenchSupport.skipTo(clientEvents, CmEvent.Established.class, STEP);
        BenchSupport.skipTo(serverEvents, CmEvent.Established.class, STEP);
        write = new SendWorkRequest[] {SendWorkRequest.write(1, target.address(), target.rkey(), source.sge(0, 8))
                .withFlags(SendFlag.SIGNALED)};

        JnaDevice device = (JnaDevice) client.device();
        idleCq = device.createCompletionQueue(16, null);
        idleCqPointer = idleCq.handle();
        wc = new Memory(IbvWc.SIZE);
        wcPointer = Pointer.nativeValue(wc);
        direct = ContextOps.of(device.context);
        Pointer ctx = new Pointer(device.context);
        function = new FunctionContextOps(new long[] {
            Pointer.nativeValue(ctx.getPointer(IbvContext.POLL_CQ)),
            Pointer.nativeValue(ctx.getPointer(IbvContext.REQ_NOTIFY_CQ)),
            Pointer.nativeValue(ctx.getPointer(IbvContext.POST_SEND)),
            Pointer.nativeValue(ctx.getPointer(IbvContext.POST_RECV)),
            Pointer.nativeValue(ctx.getPointer(IbvContext.POST_SRQ_RECV))});
        if (!(direct instanceof DirectContextOps)) {
            throw new IllegalStateException("the device's ops table is not the direct-mapped one");
        }
    }

    @TearDown(Level.Trial)
    public void close() throws Exception {
        client.disconnect();
        BenchSupport.skipTo(serverEvents, CmEvent.Disconnected.class, STEP);
        server.disconnect(); // answers the DREQ
        BenchSupport.skipTo(clientEvents, CmEvent.Disconnected.class, STEP);
        BenchSupport.closeAll(idleCq, clientQp, serverQp, source, target, clientCq, serverCq, clientPd, serverPd,
                client, server, listener, serverEvents, clientEvents);
        long leaked = fabric.ledger().total();
        fabric.close();
        if (leaked != 0) {
            throw new IllegalStateException(leaked + " resources leaked");
        }
    }

    /** The floor: an exported function through JNA direct mapping. */
    @Benchmark
    public int emptyCall() {
        return Empty.abs(--counter);
    }

    /** ibv_poll_cq on an empty CQ through the ops pointer, direct-mapped (the provider's way). */
    @Benchmark
    public int pollCqDirect() {
        return direct.pollCq(idleCqPointer, 1, wcPointer);
    }

    /** The same call through {@code com.sun.jna.Function.invokeInt}. */
    @Benchmark
    public int pollCqFunction() {
        return function.pollCq(idleCqPointer, 1, wcPointer);
    }

    /**
     * Through the SPI: post one signaled 8-byte RDMA WRITE and poll until it completes. Includes
     * the device's round trip (the peer's ACK), which on Soft-RoCE is kernel work.
     */
    @Benchmark
    public WorkCompletion postSendPollCq() {
        clientQp.postSend(write);
        while (clientCq.poll(completions) == 0) {
            Thread.onSpinWait();
        }
        if (!completions[0].isSuccess()) {
            throw new IllegalStateException("completion in error: " + completions[0]);
        }
        return completions[0];
    }
}
