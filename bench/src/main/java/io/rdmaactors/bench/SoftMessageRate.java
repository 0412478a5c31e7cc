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
import io.rdmaactors.verbs.SendWorkRequest;
import io.rdmaactors.verbs.WcOpcode;
import io.rdmaactors.verbs.WorkCompletion;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Message rate of 64-byte SEND/RECV messages on one soft RC connection in one JVM (a CM listener
 * and a client, as in PingPong), against the same messages handed between two threads through an
 * {@link ArrayBlockingQueue}, in the same run.
 *
 * <p>Soft side: the sender streams with a window of {@code window} messages the receiver has not
 * yet consumed, posts {@code batch} sends per {@code postSend}, and signals one send in every
 * {@code signal} (the others unsignaled, their send-queue slots retired by the signaled one). The
 * receiver keeps {@code window} receives posted, polls in batches, checks each message's sequence
 * stamp, reposts receives in batches of {@code credit} and returns that many credits to the
 * sender with a 0-byte SEND_WITH_IMM. Peer: a producer copies each 64-byte message out of a direct
 * buffer into a fresh array and puts it on an ArrayBlockingQueue of capacity {@code window}; the
 * consumer takes it, copies it into a direct buffer and checks the stamp. Rounds alternate between
 * the two after a warm-up round of each.
 */
public final class SoftMessageRate {

    static final int SIZE = 64;
    private static final Duration STEP = Duration.ofSeconds(10);
    /** A run still measuring after this long fails instead of reporting, so it always ends. */
    private static final long RUN_LIMIT_NANOS = TimeUnit.SECONDS.toNanos(50);
    private static final String USAGE = "SoftMessageRate [--messages=N per measured round, default 2000000]"
            + " [--warmup=N, default 2000000] [--rounds=N, default 3] [--window=N, default 128]"
            + " [--batch=N sends per post, default 16] [--signal=N one signaled send every N, default 16]"
            + " [--credit=N receives reposted per batch, default 32]";

    private final int window;
    private final int batch;
    private final int signal;
    private final int credit;
    private long deadline;

    private SoftMessageRate(int window, int batch, int signal, int credit) {
        this.window = window;
        this.batch = batch;
        this.signal = signal;
        this.credit = credit;
    }

    public static void main(String[] args) throws Exception {
        BenchSupport.Options o = new BenchSupport.Options(args, USAGE, "messages", "warmup", "rounds", "window",
                "batch", "signal", "credit");
        int window = o.integer("window", 128, 1);
        int batch = o.integer("batch", 16, 1);
        int signal = o.integer("signal", 16, 1);
        int credit = o.integer("credit", 32, 1);
        if (window % batch != 0 || window % signal != 0 || window % credit != 0) {
            throw new IllegalArgumentException("--window must be a multiple of --batch, --signal and --credit\n"
                    + USAGE);
        }
        // whole windows per round: every signaled send and every credit falls inside its round
        int messages = roundUp(o.integer("messages", 2_000_000, 1), window);
        int warmup = roundUp(o.integer("warmup", 2_000_000, 1), window);
        int rounds = o.integer("rounds", 3, 1);
        BenchSupport.runOrReport("SoftMessageRate",
                () -> new SoftMessageRate(window, batch, signal, credit).run(messages, warmup, rounds));
    }

    /**
     * One empty poll: spin, but yield now and then, so that on an oversubscribed machine (two
     * cores here) a spinning thread does not hold the core its peer, or a lock holder, needs.
     */
    static int backOff(int idle) {
        if ((++idle & 63) == 0) {
            Thread.yield();
        } else {
            Thread.onSpinWait();
        }
        return idle;
    }

    private static int roundUp(int n, int multiple) {
        return (n + multiple - 1) / multiple * multiple;
    }

    private void run(int messages, int warmup, int rounds) throws Exception {
        System.out.printf("SoftMessageRate: %d-byte messages, window %d, %d sends per post, 1 signaled in %d,"
                + " receives reposted %d at a time; warm-up %d, %d rounds of %d messages per side%n",
                SIZE, window, batch, signal, credit, warmup, rounds, messages);
        deadline = System.nanoTime() + RUN_LIMIT_NANOS;
        double[] soft = new double[rounds];
        double[] queue = new double[rounds];
        long ledgerTotal;
        try (Fabric fabric = Fabric.open("soft")) {
            SoftLink link = new SoftLink(fabric);
            try {
                double w1 = link.round(warmup);
                double w2 = queueRound(warmup);
                System.out.printf("warm-up: soft %.3f M msg/s, ArrayBlockingQueue %.3f M msg/s%n", w1 / 1e6, w2 / 1e6);
                for (int r = 0; r < rounds; r++) {
                    // alternate which side goes first, so neither always runs on a warmer machine
                    if (r % 2 == 0) {
                        soft[r] = link.round(messages);
                        queue[r] = queueRound(messages);
                    } else {
                        queue[r] = queueRound(messages);
                        soft[r] = link.round(messages);
                    }
                    System.out.printf("round %d: soft %.3f M msg/s, ArrayBlockingQueue %.3f M msg/s, ratio %.3f%n",
                            r + 1, soft[r] / 1e6, queue[r] / 1e6, soft[r] / queue[r]);
                }
            } finally {
                link.close();
            }
            ledgerTotal = fabric.ledger().total();
            if (ledgerTotal != 0) {
                throw new IllegalStateException("leaked: " + fabric.ledger());
            }
        }
        double softBest = BenchSupport.best(soft);
        double softMedian = BenchSupport.median(soft);
        double queueBest = BenchSupport.best(queue);
        double queueMedian = BenchSupport.median(queue);
        System.out.printf("SUMMARY SoftMessageRate: soft %.3f M msg/s best, %.3f median | ArrayBlockingQueue"
                + " %.3f M msg/s best, %.3f median | soft/queue %.3f best, %.3f median, %.3f per-round median"
                + " | target soft >= 1 M msg/s (median): %s | fabric.ledger().total() == %d%n",
                softBest / 1e6, softMedian / 1e6, queueBest / 1e6, queueMedian / 1e6, softBest / queueBest,
                softMedian / queueMedian, BenchSupport.pairedRatio(soft, queue), softMedian >= 1e6 ? "met" : "MISSED",
                ledgerTotal);
    }

    // ---------------------------------------------------------------- soft fabric

    /** One side of the connection: id, PD, CQ, QP and its registered slots. */
    private static final class Side {
        final CmId id;
        ProtectionDomain pd;
        CompletionQueue cq;
        QueuePair qp;
        MemoryRegion slots;

        Side(CmId id) {
            this.id = id;
        }

        void setUp(int cqe, int maxSend, int maxRecv, int slotCount) {
            pd = id.device().allocateProtectionDomain();
            cq = id.device().createCompletionQueue(cqe, null);
            qp = id.createQueuePair(pd, QpInitAttributes.rc(cq, maxSend, maxRecv));
            slots = pd.register(ByteBuffer.allocateDirect(slotCount * SIZE));
        }

        void close() throws Exception {
            if (qp != null) {
                id.destroyQueuePair();
            }
            BenchSupport.closeAll(slots, cq, pd, id);
        }
    }

    /** The connection, its receiver thread, and the sender's state that carries over between rounds. */
    private final class SoftLink {
        final EventChannel serverEvents;
        final EventChannel clientEvents;
        final CmId listener;
        final Side sender;
        final Side receiver;
        final SendWorkRequest[] sends;
        final SendWorkRequest[][] postBatches;
        final ReceiveWorkRequest[] creditReceives;
        final ByteBuffer sendSlots;
        final Thread receiverThread;
        final Semaphore roundStart = new Semaphore(0);
        final Semaphore roundEnd = new Semaphore(0);
        final AtomicReference<Throwable> receiverFailure = new AtomicReference<>();
        volatile long roundMessages;
        volatile long roundEndNanos;
        volatile boolean stop;
        long seq;
        long credits;
        long posted;
        long retired;
        final WorkCompletion[] wcs = new WorkCompletion[64];

        SoftLink(Fabric fabric) throws Exception {
            serverEvents = fabric.createEventChannel();
            clientEvents = fabric.createEventChannel();
            listener = fabric.createCmId(serverEvents, PortSpace.TCP);
            listener.bind(new InetSocketAddress("127.0.0.1", 0));
            listener.listen(8);

            sender = new Side(fabric.createCmId(clientEvents, PortSpace.TCP));
            sender.id.resolveAddress(null, listener.localAddress(), STEP);
            BenchSupport.expect(clientEvents, CmEvent.AddrResolved.class, STEP);
            sender.id.resolveRoute(STEP);
            BenchSupport.expect(clientEvents, CmEvent.RouteResolved.class, STEP);
            int creditMessages = window / credit + 4;
            // the sender's send queue holds the window; its receive queue the credit messages
            sender.setUp(4 * window + 4 * creditMessages, window, creditMessages, window);
            creditReceives = new ReceiveWorkRequest[creditMessages];
            for (int i = 0; i < creditMessages; i++) {
                creditReceives[i] = ReceiveWorkRequest.of(i);
                sender.qp.postReceive(creditReceives[i]);
            }
            sender.id.connect(ConnectionParameters.of(null));

            CmEvent.ConnectRequest req = BenchSupport.expect(serverEvents, CmEvent.ConnectRequest.class, STEP);
            receiver = new Side(serverEvents.cmId(req.id()));
            receiver.setUp(4 * window + 4 * creditMessages, creditMessages, window, window);
            ReceiveWorkRequest[] receives = new ReceiveWorkRequest[window];
            for (int s = 0; s < window; s++) {
                receives[s] = ReceiveWorkRequest.of(s, receiver.slots.sge(s * SIZE, SIZE));
            }
            receiver.qp.postReceive(receives);
            receiver.id.accept(ConnectionParameters.of(null));
            BenchSupport.expect(clientEvents, CmEvent.Established.class, STEP);
            BenchSupport.expect(serverEvents, CmEvent.Established.class, STEP);

            sends = new SendWorkRequest[window];
            for (int s = 0; s < window; s++) {
                SendWorkRequest send = SendWorkRequest.send(s, sender.slots.sge(s * SIZE, SIZE));
                sends[s] = s % signal == signal - 1 ? send : send.unsignaled();
            }
            postBatches = new SendWorkRequest[batch + 1][];
            for (int n = 1; n <= batch; n++) {
                postBatches[n] = new SendWorkRequest[n];
            }
            sendSlots = sender.slots.buffer();
            credits = window;
            receiverThread = new Thread(() -> receive(receives), "soft-receiver");
            receiverThread.setDaemon(true);
            receiverThread.start();
        }

        /** Streams {@code messages} messages; returns messages per second. */
        double round(long messages) throws Exception {
            roundMessages = messages;
            roundStart.release();
            long end = seq + messages;
            long start = System.nanoTime();
            int idle = 0;
            while (seq < end) {
                int polled = pollSender();
                long room = Math.min(Math.min(credits, window - (posted - retired)), Math.min(batch, end - seq));
                if (room > 0 && (room == batch || room == end - seq)) {
                    SendWorkRequest[] post = postBatches[(int) room];
                    for (int i = 0; i < room; i++) {
                        int slot = (int) (seq % window);
                        sendSlots.putLong(slot * SIZE, seq);
                        post[i] = sends[slot];
                        seq++;
                    }
                    sender.qp.postSend(post);
                    credits -= room;
                    posted += room;
                } else if (polled == 0) {
                    idle = backOff(idle);
                    if ((idle & 0xfff) == 0) {
                        checkAlive();
                    }
                }
            }
            while (!roundEnd.tryAcquire(1, TimeUnit.MILLISECONDS)) {
                checkAlive();
            }
            long elapsed = roundEndNanos - start;
            // settle: every credit back, every send retired, so the next round starts from a full window
            while (credits != window || posted != retired) {
                if (pollSender() == 0) {
                    checkAlive();
                    idle = backOff(idle);
                }
            }
            return messages * 1e9 / elapsed;
        }

        private void checkAlive() {
            Throwable failure = receiverFailure.get();
            if (failure != null) {
                throw new IllegalStateException("the receiver failed", failure);
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("still measuring " + RUN_LIMIT_NANOS / 1_000_000_000
                        + " s after the start (is the machine busy?): seq " + seq + ", credits " + credits
                        + ", posted " + posted + ", retired " + retired);
            }
        }

        /** Polls the sender's CQ: signaled sends retire their slots, credit messages return credits. */
        private int pollSender() {
            int n = sender.cq.poll(wcs);
            for (int i = 0; i < n; i++) {
                WorkCompletion wc = wcs[i];
                if (!wc.isSuccess()) {
                    throw new IllegalStateException("sender work request failed: " + wc);
                }
                if (wc.opcode() == WcOpcode.RECV) {
                    credits += wc.immData();
                    sender.qp.postReceive(creditReceives[(int) wc.wrId()]);
                } else {
                    retired += signal;
                }
            }
            return n;
        }

        /** The receiver thread: one pass per round, idle (blocked) between rounds. */
        private void receive(ReceiveWorkRequest[] receives) {
            ByteBuffer slots = receiver.slots.buffer();
            WorkCompletion[] polled = new WorkCompletion[64];
            ReceiveWorkRequest[] repost = new ReceiveWorkRequest[credit];
            SendWorkRequest creditSend = SendWorkRequest.sendWithImmediate(-1, credit);
            long expected = 0;
            int idle = 0;
            try {
                while (true) {
                    roundStart.acquire();
                    if (stop) {
                        return;
                    }
                    long target = roundMessages;
                    long received = 0;
                    int pending = 0;
                    while (received < target) {
                        int n = receiver.cq.poll(polled);
                        if (n == 0) {
                            idle = backOff(idle);
                            if (stop) {
                                return;
                            }
                            continue;
                        }
                        for (int i = 0; i < n; i++) {
                            WorkCompletion wc = polled[i];
                            if (!wc.isSuccess()) {
                                throw new IllegalStateException("receiver work request failed: " + wc);
                            }
                            if (wc.opcode() != WcOpcode.RECV) {
                                continue; // a credit send's completion
                            }
                            int slot = (int) wc.wrId();
                            long stamp = slots.getLong(slot * SIZE);
                            if (stamp != expected || wc.byteLen() != SIZE) {
                                throw new IllegalStateException("message " + expected + " arrived as " + stamp
                                        + " with " + wc.byteLen() + " bytes");
                            }
                            expected++;
                            received++;
                            repost[pending++] = receives[slot];
                            if (pending == credit) {
                                receiver.qp.postReceive(repost);
                                receiver.qp.postSend(creditSend);
                                pending = 0;
                            }
                        }
                    }
                    roundEndNanos = System.nanoTime();
                    roundEnd.release();
                }
            } catch (Throwable t) {
                receiverFailure.set(t);
            }
        }

        void close() throws Exception {
            stop = true;
            roundStart.release();
            receiverThread.join(5000);
            sender.id.disconnect();
            BenchSupport.skipTo(serverEvents, CmEvent.Disconnected.class, STEP);
            receiver.id.disconnect();
            BenchSupport.skipTo(clientEvents, CmEvent.Disconnected.class, STEP);
            sender.close();
            receiver.close();
            listener.close();
            serverEvents.close();
            clientEvents.close();
        }
    }

    // ---------------------------------------------------------------- the peer: ArrayBlockingQueue

    /** The same messages through an ArrayBlockingQueue of capacity {@code window}; messages per second. */
    private double queueRound(long messages) throws Exception {
        ArrayBlockingQueue<byte[]> queue = new ArrayBlockingQueue<>(window);
        ByteBuffer source = ByteBuffer.allocateDirect(window * SIZE);
        ByteBuffer sink = ByteBuffer.allocateDirect(window * SIZE);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        long[] endNanos = new long[1];
        Thread consumer = new Thread(() -> {
            try {
                for (long i = 0; i < messages; i++) {
                    byte[] m = queue.take();
                    int slot = (int) (i % window);
                    sink.put(slot * SIZE, m);
                    if (sink.getLong(slot * SIZE) != i) {
                        throw new IllegalStateException("message " + i + " arrived as " + sink.getLong(slot * SIZE));
                    }
                }
                endNanos[0] = System.nanoTime();
            } catch (Throwable t) {
                failure.set(t);
            }
        }, "queue-consumer");
        consumer.setDaemon(true);
        consumer.start();
        long start = System.nanoTime();
        for (long i = 0; i < messages; i++) {
            int slot = (int) (i % window);
            source.putLong(slot * SIZE, i);
            byte[] m = new byte[SIZE];
            source.get(slot * SIZE, m);
            if (!queue.offer(m, Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                throw new IllegalStateException("the consumer stopped taking", failure.get());
            }
        }
        consumer.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
        if (failure.get() != null || consumer.isAlive()) {
            throw new IllegalStateException("the consumer failed or hung", failure.get());
        }
        return messages * 1e9 / (endNanos[0] - start);
    }
}
