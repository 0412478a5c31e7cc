package io.rdmaactors.examples;

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
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * Send/receive ping-pong on the bare SPI, as ib_send_lat runs it: the client's private data
 * carries the message count and size, the server's agent echoes every message back, and the
 * client checks every byte. -s serves one client and exits; neither -s nor -c runs both here.
 */
@Command(name = "ping-pong", description = "Send/receive ping-pong through the RDMA CM, contents verified.")
public final class PingPong implements Callable<Integer> {

    private static final String NAME = "ping-pong";
    private static final Duration STEP = Duration.ofSeconds(5);
    /** How often a side waiting for a completion looks for a DISCONNECTED, as rping's cm_thread would see it. */
    private static final long CM_CHECK_NANOS = 1_000_000;

    @Mixin
    RdmaFlags flags;

    @Option(names = {"-C", "--count"}, defaultValue = "10000", description = "round trips (default ${DEFAULT-VALUE})")
    int count;

    @Option(names = {"-S", "--size"}, defaultValue = "64", description = "message bytes (default ${DEFAULT-VALUE})")
    int size;

    @Option(names = {"-V", "--verify"}, negatable = true, defaultValue = "true", fallbackValue = "true",
            description = "check every byte that comes back (default; --no-verify checks nothing)")
    boolean verify;

    /** The peer disconnected while this side waited for a completion. */
    private static final class PeerDisconnected extends RuntimeException {
        PeerDisconnected() {
            super("the peer disconnected");
        }
    }

    /** One side of the connection: its id, PD, CQ, QP and one registered buffer each way. */
    private static final class Endpoint implements AutoCloseable {
        final CmId id;
        final EventChannel events;
        ProtectionDomain pd;
        CompletionQueue cq;
        QueuePair qp;
        MemoryRegion sendBuffer;
        MemoryRegion recvBuffer;

        Endpoint(CmId id, EventChannel events) {
            this.id = id;
            this.events = events;
        }

        void setUp(int size) {
            pd = id.device().allocateProtectionDomain();
            cq = id.device().createCompletionQueue(64, null);
            qp = id.createQueuePair(pd, QpInitAttributes.rc(cq, 16, 16));
            sendBuffer = pd.register(ByteBuffer.allocateDirect(size));
            recvBuffer = pd.register(ByteBuffer.allocateDirect(size));
            qp.postReceive(ReceiveWorkRequest.of(1, recvBuffer.sge()));
        }

        /** The peer's Disconnected was taken from the event channel. */
        boolean disconnected;

        /** The next completion, busy-polled; a DISCONNECTED or a failed work request ends the wait. */
        WorkCompletion next() throws Exception {
            WorkCompletion[] wc = new WorkCompletion[1];
            long deadline = System.nanoTime() + STEP.toNanos();
            long cmCheck = System.nanoTime() + CM_CHECK_NANOS;
            while (cq.poll(wc) == 0) {
                if (disconnected) {
                    throw new PeerDisconnected();
                }
                long now = System.nanoTime();
                if (now > cmCheck) {
                    cmCheck = now + CM_CHECK_NANOS;
                    // what completed before the disconnect may have come since the last poll:
                    // the loop polls once more before it gives up
                    disconnected = events.await(Duration.ZERO) instanceof CmEvent.Disconnected;
                    continue;
                }
                if (now > deadline) {
                    throw new Program.Failure("no completion within " + STEP.toSeconds() + " s", null);
                }
                Thread.onSpinWait();
            }
            if (!wc[0].isSuccess()) {
                throw new Program.Failure(wc[0].opcode() + " failed with " + wc[0].status(), null);
            }
            return wc[0];
        }

        @Override
        public void close() {
            id.destroyQueuePair();
            for (AutoCloseable c : new AutoCloseable[] {sendBuffer, recvBuffer, cq, pd}) {
                try {
                    if (c != null) {
                        c.close();
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }
            id.close();
        }
    }

    @Override
    public Integer call() throws Exception {
        flags.check("--count", count, 1, Integer.MAX_VALUE);
        flags.check("--size", size, 1, Program.MAX_SIZE);
        RdmaFlags.Role role = flags.role();
        try (Fabric fabric = Program.open(flags.fabric)) {
            if (role == RdmaFlags.Role.CLIENT) {
                ping(fabric, flags.serverAddress());
            } else {
                EventChannel serverEvents = fabric.createEventChannel();
                CmId listener = fabric.createCmId(serverEvents, PortSpace.TCP);
                listener.bind(flags.bind());
                listener.listen(1);
                if (role == RdmaFlags.Role.SERVER) {
                    Program.announce(NAME, listener.localAddress());
                    serve(serverEvents, Duration.ofDays(365));
                } else {
                    Exception[] serverFailure = new Exception[1];
                    Thread server = new Thread(() -> {
                        try {
                            serve(serverEvents, STEP);
                        } catch (Exception e) {
                            serverFailure[0] = e;
                        }
                    }, "ping-pong-server");
                    server.start();
                    ping(fabric, listener.localAddress());
                    server.join();
                    if (serverFailure[0] != null) {
                        throw serverFailure[0];
                    }
                }
                listener.close();
                serverEvents.close();
            }
            if (fabric.ledger().total() != 0) {
                throw new Program.Failure("leaked: " + fabric.ledger(), null);
            }
        }
        return 0;
    }

    /** Accepts one client, echoes what its private data announced, and waits for its disconnect. */
    private static void serve(EventChannel events, Duration waitForClient) throws Exception {
        CmEvent.ConnectRequest req = CmEvents.expect(events, CmEvent.ConnectRequest.class, waitForClient);
        ByteBuffer asked = ByteBuffer.wrap(req.privateData());
        int rounds = asked.getInt();
        int bytes = asked.getInt();
        try (Endpoint agent = new Endpoint(events.cmId(req.id()), events)) {
            agent.setUp(bytes);
            agent.id.accept(ConnectionParameters.of(null));
            CmEvents.expect(events, CmEvent.Established.class, STEP);
            System.out.println(NAME + " server: client " + agent.id.remoteAddress() + " connected");
            int echoed = 0;
            try {
                for (; echoed < rounds; echoed++) {
                    WorkCompletion received = agent.next();
                    agent.sendBuffer.buffer().put(0, agent.recvBuffer.buffer(), 0, received.byteLen());
                    agent.qp.postReceive(ReceiveWorkRequest.of(1, agent.recvBuffer.sge()));
                    agent.qp.postSend(SendWorkRequest.send(2, agent.sendBuffer.sge(0, received.byteLen())));
                    agent.next();
                }
                if (!agent.disconnected) {
                    CmEvents.expect(events, CmEvent.Disconnected.class, STEP);
                }
            } catch (PeerDisconnected e) {
                throw new Program.Failure("server: the client disconnected after " + echoed + " of " + rounds
                        + " round trips", e);
            }
            agent.id.disconnect();
            System.out.printf("%s server: echoed %d messages of %d bytes to %s%n", NAME, rounds, bytes,
                    agent.id.remoteAddress());
        }
    }

    private void ping(Fabric fabric, InetSocketAddress server) throws Exception {
        EventChannel events = fabric.createEventChannel();
        try (Endpoint client = new Endpoint(fabric.createCmId(events, PortSpace.TCP), events)) {
            client.id.resolveAddress(null, server, STEP);
            CmEvents.expect(events, CmEvent.AddrResolved.class, STEP);
            client.id.resolveRoute(STEP);
            CmEvents.expect(events, CmEvent.RouteResolved.class, STEP);
            client.setUp(size);
            client.id.connect(ConnectionParameters.of(Payload.ints(count, size)));
            CmEvent established = events.await(STEP);
            if (established instanceof CmEvent.Rejected) {
                throw new Program.Failure("connection to " + server.getAddress().getHostAddress() + ":"
                        + server.getPort() + " refused: no server listens there", null);
            }
            if (!(established instanceof CmEvent.Established)) {
                throw new Program.Failure("no connection to " + server + ": " + established, null);
            }
            Report report = new Report();
            int round = 0;
            long start = System.nanoTime();
            try (Report.Progress progress = Report.Progress.of(NAME + " round trips", count)) {
                for (; round < count; round++) {
                    long sent = System.nanoTime();
                    ByteBuffer out = client.sendBuffer.buffer();
                    for (int b = 0; b < size; b++) {
                        out.put(b, (byte) (round + b));
                    }
                    client.qp.postSend(SendWorkRequest.send(2, client.sendBuffer.sge()));
                    WorkCompletion first = client.next();
                    WorkCompletion second = client.next();
                    WorkCompletion recv = first.opcode() == WcOpcode.RECV ? first : second;
                    ByteBuffer in = client.recvBuffer.buffer();
                    for (int b = 0; verify && b < recv.byteLen(); b++) {
                        if (in.get(b) != (byte) (round + b)) {
                            throw new Program.Failure("round trip " + round + ": byte " + b + " came back wrong", null);
                        }
                    }
                    client.qp.postReceive(ReceiveWorkRequest.of(1, client.recvBuffer.sge()));
                    report.record(System.nanoTime() - sent);
                    progress.advance();
                }
            } catch (PeerDisconnected e) {
                throw new Program.Failure("the server disconnected after " + round + " of " + count + " round trips", e);
            }
            long elapsed = System.nanoTime() - start;
            client.id.disconnect();
            CmEvents.expect(events, CmEvent.Disconnected.class, STEP);
            System.out.printf("%s: %d round trips of %d bytes on the %s fabric, %s: %.2f us per round trip%n%s%n%s%n",
                    NAME, count, size, fabric.provider(), verify ? "contents verified" : "not verified",
                    elapsed / 1000.0 / count, report.latency("round trip"), Report.throughput(count, size, elapsed));
        }
        events.close();
    }
}
