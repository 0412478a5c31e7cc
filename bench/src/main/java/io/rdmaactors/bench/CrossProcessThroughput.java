package io.rdmaactors.bench;

import io.rdmaactors.cm.CmEvent;
import io.rdmaactors.verbs.CmId;
import io.rdmaactors.verbs.CompletionChannel;
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
import io.rdmaactors.verbs.SendWorkRequest;
import io.rdmaactors.verbs.WcOpcode;
import io.rdmaactors.verbs.WorkCompletion;
import java.io.BufferedReader;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Throughput of 64 KiB messages between two processes: the soft fabric against a plain
 * {@link Socket} on loopback, between this process and the same child ({@link ThroughputPeer}),
 * rounds interleaved.
 *
 * <p>Soft side: an RDMA WRITE stream into a ring the child exports, with up to {@code window}
 * writes outstanding and one signaled write in every {@code signal}, then an END send per round;
 * the child checks that the last messages landed (each carries its sequence number in its first
 * and last 8 bytes) and answers with a send. A round's time runs from the first post to that
 * answer. This process waits for completions on a completion channel (poll, arm, poll, wait),
 * so neither process spins on the two shared cores. Socket side: an 8-byte count and first
 * sequence, then the messages, one {@code write} of 64 KiB each; the child reads and checks every
 * message and answers with 8 bytes; time from the first write to that answer.
 */
public final class CrossProcessThroughput {

    static final int MESSAGE = 64 * 1024;
    /** Slots of the child's ring the writes go round. */
    static final int RING = 32;
    static final int CONTROL = 64;
    static final int CONTROL_SLOTS = 8;
    static final int END = 1;
    static final int QUIT = 2;

    private static final Duration STEP = Duration.ofSeconds(10);
    private static final long ROUND_LIMIT_NANOS = TimeUnit.SECONDS.toNanos(20);
    /** A run still measuring after this long fails instead of reporting, so it always ends. */
    private static final long RUN_LIMIT_NANOS = TimeUnit.SECONDS.toNanos(45);
    private static final String USAGE = "CrossProcessThroughput [--mib=N MiB per round, default 256]"
            + " [--warmup=N warm-up rounds per side, default 3] [--rounds=N measured rounds per side, default 5]"
            + " [--window=N writes outstanding, default 16]"
            + " [--signal=N one signaled write every N, default 4]";

    private final int window;
    private final int signal;
    private long runDeadline;

    private CrossProcessThroughput(int window, int signal) {
        this.window = window;
        this.signal = signal;
    }

    public static void main(String[] args) throws Exception {
        BenchSupport.Options o = new BenchSupport.Options(args, USAGE, "mib", "warmup", "rounds", "window", "signal");
        int mib = o.integer("mib", 256, 1);
        int warmup = o.integer("warmup", 3, 0);
        int rounds = o.integer("rounds", 5, 1);
        int window = o.integer("window", 16, 1);
        int signal = o.integer("signal", 4, 1);
        if (signal > window) {
            throw new IllegalArgumentException("--signal must not exceed --window\n" + USAGE);
        }
        BenchSupport.runOrReport("CrossProcessThroughput",
                () -> new CrossProcessThroughput(window, signal).run(mib * 16L, warmup, rounds));
    }

    private void run(long messages, int warmup, int rounds) throws Exception {
        System.out.printf("CrossProcessThroughput: %d KiB messages, %d MiB per round, soft = RDMA WRITE stream"
                + " (window %d, 1 signaled in %d) + END send, vs java.net.Socket on loopback; %d warm-up and"
                + " %d measured rounds per side, interleaved%n", MESSAGE / 1024, messages * MESSAGE >> 20, window,
                signal,
                warmup, rounds);
        runDeadline = System.nanoTime() + RUN_LIMIT_NANOS;
        List<String> command = new ArrayList<>(List.of(BenchSupport.javaBinary(), "-cp",
                System.getProperty("java.class.path"), "-Xmx256m"));
        // extra JVM options for the child, e.g. -Dbench.child.jvm=-XX:StartFlightRecording=filename=child.jfr
        String extra = System.getProperty("bench.child.jvm", "").trim();
        if (!extra.isEmpty()) {
            command.addAll(List.of(extra.split("\\s+")));
        }
        command.add(ThroughputPeer.class.getName());
        Process child = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        double[] soft = new double[rounds];
        double[] socket = new double[rounds];
        long ledgerTotal;
        String childLedger = null;
        int childStatus;
        try {
            BufferedReader childOut = new BufferedReader(new InputStreamReader(child.getInputStream(),
                    StandardCharsets.UTF_8));
            String line = childOut.readLine();
            while (line != null && !line.startsWith("PORTS ")) {
                line = childOut.readLine(); // what JVM options may print first
            }
            if (line == null) {
                throw new IllegalStateException("the child printed no ports: " + line);
            }
            String[] ports = line.split(" ");
            int softPort = Integer.parseInt(ports[1]);
            int tcpPort = Integer.parseInt(ports[2]);

            try (Fabric fabric = Fabric.open("soft")) {
                SoftStream stream = new SoftStream(fabric, softPort);
                try (Socket s = new Socket("127.0.0.1", tcpPort)) {
                    SocketStream plain = new SocketStream(s);
                    for (int w = 0; w < warmup; w++) {
                        double w1 = stream.round(messages);
                        double w2 = plain.round(messages);
                        System.out.printf("warm-up %d: soft %.1f MB/s, socket %.1f MB/s%n", w + 1, w1 / 1e6, w2 / 1e6);
                    }
                    for (int r = 0; r < rounds; r++) {
                        if (r % 2 == 0) {
                            soft[r] = stream.round(messages);
                            socket[r] = plain.round(messages);
                        } else {
                            socket[r] = plain.round(messages);
                            soft[r] = stream.round(messages);
                        }
                        System.out.printf("round %d: soft %.1f MB/s, socket %.1f MB/s, ratio %.3f%n", r + 1,
                                soft[r] / 1e6, socket[r] / 1e6, soft[r] / socket[r]);
                    }
                    plain.finish();
                } finally {
                    stream.close();
                }
                ledgerTotal = fabric.ledger().total();
                if (ledgerTotal != 0) {
                    throw new IllegalStateException("leaked: " + fabric.ledger());
                }
            }
            if (!child.waitFor(20, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the child did not exit");
            }
            List<String> rest = new ArrayList<>();
            for (String l; (l = childOut.readLine()) != null; ) {
                rest.add(l);
                if (l.startsWith("LEDGER ")) {
                    childLedger = l.substring("LEDGER ".length());
                }
            }
            childStatus = child.exitValue();
            if (childStatus != 0) {
                throw new IllegalStateException("the child exited with " + childStatus + ": " + rest);
            }
        } finally {
            child.destroyForcibly();
            child.waitFor(10, TimeUnit.SECONDS);
        }
        double softBest = BenchSupport.best(soft);
        double softMedian = BenchSupport.median(soft);
        double socketBest = BenchSupport.best(socket);
        double socketMedian = BenchSupport.median(socket);
        double ratio = softMedian / socketMedian;
        System.out.printf("SUMMARY CrossProcessThroughput: soft %.1f MB/s best, %.1f median | socket %.1f MB/s best,"
                + " %.1f median | soft/socket %.3f best, %.3f median, %.3f per-round median | target soft >= 0.80 of"
                + " socket (median): %s | fabric.ledger().total() == %d here, %s in the child%n",
                softBest / 1e6, softMedian / 1e6, socketBest / 1e6, socketMedian / 1e6, softBest / socketBest, ratio,
                BenchSupport.pairedRatio(soft, socket), ratio >= 0.8 ? "met" : "MISSED", ledgerTotal, childLedger);
    }

    /**
     * Polls; when nothing is there, arms the CQ, polls again (closing the race) and waits on the
     * channel. Returns how many completions were polled, possibly 0.
     */
    static int pollOrWait(CompletionQueue cq, CompletionChannel channel, WorkCompletion[] out, long deadline)
            throws Exception {
        int n = cq.poll(out);
        if (n > 0) {
            return n;
        }
        cq.requestNotify(false);
        n = cq.poll(out);
        if (n > 0) {
            return n;
        }
        if (channel.await(Duration.ofMillis(100)) != null) {
            cq.ackEvents(1);
        }
        if (System.nanoTime() > deadline) {
            throw new IllegalStateException("no completion before the deadline (is the machine busy?)");
        }
        return cq.poll(out);
    }

    // ---------------------------------------------------------------- soft fabric

    private final class SoftStream {
        final EventChannel events;
        final CmId id;
        final ProtectionDomain pd;
        final CompletionChannel channel;
        final CompletionQueue cq;
        final QueuePair qp;
        final MemoryRegion source;
        final MemoryRegion control;
        final ByteBuffer sourceMemory;
        final ByteBuffer controlMemory;
        final long remoteAddress;
        final int rkey;
        final ReceiveWorkRequest[] receives = new ReceiveWorkRequest[CONTROL_SLOTS];
        final WorkCompletion[] wcs = new WorkCompletion[32];
        long seq;
        long retired;

        SoftStream(Fabric fabric, int port) throws Exception {
            events = fabric.createEventChannel();
            id = fabric.createCmId(events, PortSpace.TCP);
            id.resolveAddress(null, new InetSocketAddress("127.0.0.1", port), STEP);
            BenchSupport.expect(events, CmEvent.AddrResolved.class, STEP);
            id.resolveRoute(STEP);
            BenchSupport.expect(events, CmEvent.RouteResolved.class, STEP);
            pd = id.device().allocateProtectionDomain();
            channel = id.device().createCompletionChannel();
            cq = id.device().createCompletionQueue(4 * (window + CONTROL_SLOTS), channel);
            qp = id.createQueuePair(pd, QpInitAttributes.rc(cq, window + 4, CONTROL_SLOTS));
            source = pd.register(ByteBuffer.allocateDirect(window * MESSAGE));
            control = pd.register(ByteBuffer.allocateDirect((CONTROL_SLOTS + 1) * CONTROL));
            sourceMemory = source.buffer();
            controlMemory = control.buffer();
            for (int s = 0; s < CONTROL_SLOTS; s++) {
                receives[s] = ReceiveWorkRequest.of(s, control.sge(s * CONTROL, CONTROL));
            }
            qp.postReceive(receives);
            id.connect(ConnectionParameters.of(null));
            CmEvent.Established up = BenchSupport.expect(events, CmEvent.Established.class, STEP);
            ByteBuffer exported = ByteBuffer.wrap(up.privateData());
            remoteAddress = exported.getLong();
            rkey = exported.getInt();
            if (exported.getInt() != RING * MESSAGE) {
                throw new IllegalStateException("the child's ring is not " + RING + " messages");
            }
        }

        /** Writes {@code messages} messages and waits for the END answer; bytes per second. */
        double round(long messages) throws Exception {
            long end = seq + messages;
            long start = System.nanoTime();
            long deadline = Math.min(start + ROUND_LIMIT_NANOS, runDeadline);
            while (seq < end) {
                while (seq < end && seq - retired < window) {
                    int slot = (int) (seq % window);
                    sourceMemory.putLong(slot * MESSAGE, seq).putLong(slot * MESSAGE + MESSAGE - 8, seq);
                    SendWorkRequest write = SendWorkRequest.write(seq,
                            remoteAddress + (seq % RING) * MESSAGE, rkey, source.sge(slot * MESSAGE, MESSAGE));
                    qp.postSend(seq % signal == signal - 1 ? write : write.unsignaled());
                    seq++;
                }
                if (seq - retired >= window) {
                    handle(pollOrWait(cq, channel, wcs, deadline));
                }
            }
            int at = CONTROL_SLOTS * CONTROL;
            controlMemory.putInt(at, END).putLong(at + 8, messages).putLong(at + 16, end - 1);
            qp.postSend(SendWorkRequest.send(-1, control.sge(at, CONTROL)));
            long answered = -1;
            boolean endRetired = false;
            while (answered < 0 || !endRetired) {
                int n = pollOrWait(cq, channel, wcs, deadline);
                for (int i = 0; i < n; i++) {
                    WorkCompletion wc = wcs[i];
                    check(wc);
                    if (wc.opcode() == WcOpcode.RECV) {
                        int slot = (int) wc.wrId();
                        if (controlMemory.getInt(slot * CONTROL) != 1
                                || controlMemory.getLong(slot * CONTROL + 8) != end - 1) {
                            throw new IllegalStateException("the child found the writes of this round incomplete");
                        }
                        answered = System.nanoTime();
                        qp.postReceive(receives[slot]);
                    } else if (wc.wrId() == -1) {
                        endRetired = true;
                        retired = seq; // a signaled send retires every write before it
                    } else {
                        retired = wc.wrId() + 1;
                    }
                }
            }
            return messages * (double) MESSAGE * 1e9 / (answered - start);
        }

        private void handle(int n) {
            for (int i = 0; i < n; i++) {
                check(wcs[i]);
                if (wcs[i].opcode() == WcOpcode.RECV) {
                    throw new IllegalStateException("an answer nobody asked for: " + wcs[i]);
                }
                retired = wcs[i].wrId() + 1;
            }
        }

        private void check(WorkCompletion wc) {
            if (!wc.isSuccess()) {
                throw new IllegalStateException("work request failed: " + wc);
            }
        }

        void close() throws Exception {
            int at = CONTROL_SLOTS * CONTROL;
            controlMemory.putInt(at, QUIT);
            qp.postSend(SendWorkRequest.send(-2, control.sge(at, CONTROL)));
            long deadline = System.nanoTime() + STEP.toNanos();
            boolean sent = false;
            while (!sent) {
                int n = pollOrWait(cq, channel, wcs, deadline);
                for (int i = 0; i < n; i++) {
                    check(wcs[i]);
                    sent |= wcs[i].wrId() == -2 && wcs[i].opcode() != WcOpcode.RECV;
                }
            }
            id.disconnect();
            BenchSupport.skipTo(events, CmEvent.Disconnected.class, STEP);
            id.destroyQueuePair();
            BenchSupport.closeAll(source, control, cq, channel, pd, id, events);
        }
    }

    // ---------------------------------------------------------------- plain sockets

    private final class SocketStream {
        final DataInputStream in;
        final OutputStream out;
        final DataOutputStream header;
        final byte[] message = new byte[MESSAGE];
        final ByteBuffer view = ByteBuffer.wrap(message);
        long seq;

        SocketStream(Socket socket) throws Exception {
            socket.setTcpNoDelay(true);
            socket.setSoTimeout((int) TimeUnit.NANOSECONDS.toMillis(ROUND_LIMIT_NANOS));
            in = new DataInputStream(socket.getInputStream());
            out = socket.getOutputStream();
            header = new DataOutputStream(out);
        }

        double round(long messages) throws Exception {
            if (System.nanoTime() > runDeadline) {
                throw new IllegalStateException("still measuring " + RUN_LIMIT_NANOS / 1_000_000_000
                        + " s after the start (is the machine busy?)");
            }
            long first = seq;
            long start = System.nanoTime();
            header.writeLong(messages);
            header.writeLong(first);
            for (long i = 0; i < messages; i++) {
                view.putLong(0, seq).putLong(MESSAGE - 8, seq);
                out.write(message);
                seq++;
            }
            out.flush();
            long last = in.readLong();
            long elapsed = System.nanoTime() - start;
            if (last != seq - 1) {
                throw new IllegalStateException("the child answered " + last + ", not " + (seq - 1));
            }
            return messages * (double) MESSAGE * 1e9 / elapsed;
        }

        void finish() throws Exception {
            header.writeLong(0);
            header.flush();
        }
    }
}
