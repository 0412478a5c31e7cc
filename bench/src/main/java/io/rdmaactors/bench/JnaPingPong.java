package io.rdmaactors.bench;

import io.rdmaactors.cm.CmEvent;
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
import io.rdmaactors.verbs.ReceiveWorkRequest;
import io.rdmaactors.verbs.SendFlag;
import io.rdmaactors.verbs.SendWorkRequest;
import io.rdmaactors.verbs.WcOpcode;
import io.rdmaactors.verbs.WorkCompletion;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Send/receive ping-pong latency on rdma-core (the jna provider, or {@code --provider=ffm}: its
 * post, poll and arm through FFM, on Java 22+ with the ffm module on the class path), the Java counterpart of
 * rdma-core's {@code ib_send_lat -R}: one RC connection set up through the CM, client and server
 * in one process on the device's address (10.0.2.15 in the Soft-RoCE guest), {@code size}-byte
 * inline SENDs, every thread busy-polling its own CQ. The client times each round trip (post of
 * its SEND to the completion of the reply's RECV) with {@link System#nanoTime()} after a warm-up;
 * like ib_send_lat, latency is reported as half the round trip, with t_typical the median.
 * Each side keeps {@code RECV_DEPTH} receives posted and reposts one per message; one send in
 * {@code SIGNAL} is signaled, the others retired by it. Compare runs with
 * {@code native/latency-vs-perftest.sh}, which interleaves this with ib_send_lat in the guest.
 */
public final class JnaPingPong {

    private static final Duration STEP = Duration.ofSeconds(20);
    private static final int RECV_DEPTH = 16;
    private static final int SEND_DEPTH = 64;
    private static final int SIGNAL = 16;
    /** A run still going after this long fails instead of reporting, so it always ends. */
    private static final long RUN_LIMIT_NANOS = TimeUnit.SECONDS.toNanos(300);
    private static final String USAGE = "JnaPingPong [--address=IPv4 of the RDMA device, default 10.0.2.15]"
            + " [--port=N CM port, default 0: any] [--iterations=N measured round trips, default 10000]"
            + " [--warmup=N, default 20000] [--size=N bytes, default 64] [--provider=jna|ffm, default jna]";

    private final int size;
    private final String provider;
    private final long deadline = System.nanoTime() + RUN_LIMIT_NANOS;

    private JnaPingPong(int size, String provider) {
        this.size = size;
        this.provider = provider;
    }

    public static void main(String[] args) {
        // --address and --provider are strings, which BenchSupport.Options does not parse: taken out here
        String address = "10.0.2.15";
        String provider = "jna";
        List<String> rest = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            if (args[i].startsWith("--address=")) {
                address = args[i].substring("--address=".length());
            } else if (args[i].equals("--address") && i + 1 < args.length) {
                address = args[++i];
            } else if (args[i].startsWith("--provider=")) {
                provider = args[i].substring("--provider=".length());
            } else {
                rest.add(args[i]);
            }
        }
        BenchSupport.Options o = new BenchSupport.Options(rest.toArray(new String[0]), USAGE, "port", "iterations",
                "warmup", "size");
        int port = o.integer("port", 0, 0);
        int iterations = o.integer("iterations", 10_000, 1);
        int warmup = o.integer("warmup", 20_000, 0);
        int size = o.integer("size", 64, 1);
        String host = address;
        String on = provider;
        BenchSupport.runOrReport("JnaPingPong",
                () -> new JnaPingPong(size, on).run(new InetSocketAddress(host, port), iterations, warmup));
    }

    /** One end of the connection: its id, PD, CQ, QP and one registered buffer. */
    private final class End implements AutoCloseable {
        final CmId id;
        final ProtectionDomain pd;
        final CompletionQueue cq;
        final QueuePair qp;
        final MemoryRegion mr;
        final SendWorkRequest[] send;
        final SendWorkRequest[] signaledSend;
        final ReceiveWorkRequest[] recv;
        final WorkCompletion[] wc = new WorkCompletion[SIGNAL];
        long sent;

        End(CmId id) {
            this.id = id;
            pd = id.device().allocateProtectionDomain();
            cq = id.device().createCompletionQueue(SEND_DEPTH + RECV_DEPTH, null);
            QpInitAttributes rc = QpInitAttributes.rc(cq, SEND_DEPTH, RECV_DEPTH);
            qp = id.createQueuePair(pd, new QpInitAttributes(rc.type(), cq, cq, null, SEND_DEPTH, RECV_DEPTH, 1, 1,
                    Math.max(size, rc.maxInlineData()), false));
            mr = pd.register(ByteBuffer.allocateDirect(2 * size));
            // prebuilt: the loop allocates no work requests; receives land in the second half
            send = new SendWorkRequest[] {SendWorkRequest.send(1, mr.sge(0, size)).withFlags(SendFlag.INLINE)};
            signaledSend = new SendWorkRequest[] {
                SendWorkRequest.send(2, mr.sge(0, size)).withFlags(SendFlag.INLINE, SendFlag.SIGNALED)};
            recv = new ReceiveWorkRequest[] {ReceiveWorkRequest.of(3, mr.sge(size, size))};
            for (int i = 0; i < RECV_DEPTH; i++) {
                qp.postReceive(recv);
            }
        }

        void send() {
            qp.postSend(++sent % SIGNAL == 0 ? signaledSend : send);
        }

        /** Busy-polls until the next message arrives, then reposts its receive. */
        void awaitMessage() {
            while (true) {
                int n = cq.poll(wc);
                boolean received = false;
                for (int i = 0; i < n; i++) {
                    WorkCompletion c = wc[i];
                    if (!c.isSuccess()) {
                        throw new IllegalStateException("completion in error: " + c);
                    }
                    if (c.opcode() == WcOpcode.RECV) {
                        if (c.byteLen() != size) {
                            throw new IllegalStateException("received " + c.byteLen() + " bytes, not " + size);
                        }
                        received = true;
                    }
                }
                if (received) {
                    qp.postReceive(recv);
                    return;
                }
                if (n == 0 && System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException("no message before the run's time limit");
                }
            }
        }

        @Override
        public void close() {
            qp.close();
            mr.close();
            cq.close();
            pd.close();
            id.close();
        }
    }

    private void run(InetSocketAddress address, int iterations, int warmup) throws Exception {
        System.out.printf("JnaPingPong: %d-byte inline SEND/RECV ping-pong over the CM on %s, provider %s, busy"
                + " polling; warm-up %d, %d measured round trips%n", size, address.getAddress().getHostAddress(),
                provider, warmup, iterations);
        long[] rtt = new long[iterations];
        long ledgerTotal;
        String deviceName;
        try (Fabric fabric = Fabric.open(provider)) {
            EventChannel serverEvents = fabric.createEventChannel();
            EventChannel clientEvents = fabric.createEventChannel();
            CmId listener = fabric.createCmId(serverEvents, PortSpace.TCP);
            listener.bind(address);
            listener.listen(1);
            CmId clientId = fabric.createCmId(clientEvents, PortSpace.TCP);
            clientId.resolveAddress(null, listener.localAddress(), STEP);
            BenchSupport.expect(clientEvents, CmEvent.AddrResolved.class, STEP);
            clientId.resolveRoute(STEP);
            BenchSupport.expect(clientEvents, CmEvent.RouteResolved.class, STEP);
            deviceName = clientId.device().name();
            End client = new End(clientId);
            clientId.connect(ConnectionParameters.of(new byte[0]));
            CmEvent.ConnectRequest request = BenchSupport.expect(serverEvents, CmEvent.ConnectRequest.class, STEP);
            End server = new End(serverEvents.cmId(request.id()));
            server.id.accept(ConnectionParameters.of(new byte[0]));
            // the client first: librdmacm sends the RTU, which establishes the server, while the
            // client's rdma_get_cm_event handles the connect response
            BenchSupport.skipTo(clientEvents, CmEvent.Established.class, STEP);
            BenchSupport.skipTo(serverEvents, CmEvent.Established.class, STEP);

            int total = warmup + iterations;
            CompletableFuture<Void> echo = CompletableFuture.runAsync(() -> {
                for (int i = 0; i < total; i++) {
                    server.awaitMessage();
                    server.send();
                }
            }, runnable -> {
                Thread t = new Thread(runnable, "pong");
                t.setDaemon(true);
                t.start();
            });
            for (int i = 0; i < total; i++) {
                long start = System.nanoTime();
                client.send();
                client.awaitMessage();
                if (i >= warmup) {
                    rtt[i - warmup] = System.nanoTime() - start;
                }
            }
            echo.get(STEP.toSeconds(), TimeUnit.SECONDS);

            // the server answers the DREQ with its own disconnect, else the client waits out the DREQ timeout
            clientId.disconnect();
            BenchSupport.skipTo(serverEvents, CmEvent.Disconnected.class, STEP);
            server.id.disconnect();
            BenchSupport.skipTo(clientEvents, CmEvent.Disconnected.class, STEP);
            BenchSupport.closeAll(client, server, listener, serverEvents, clientEvents);
            ledgerTotal = fabric.ledger().total();
        }
        if (ledgerTotal != 0) {
            throw new IllegalStateException(ledgerTotal + " resources leaked");
        }
        BenchSupport.printLatencyTable("JnaPingPong", deviceName, size, rtt);
    }
}
