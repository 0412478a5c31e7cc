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
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Send/receive ping-pong between a listener and a client in one process: the client's private
 * data carries the message count and size, the listener's agent echoes every message back, and
 * the client checks every byte. The classic first RDMA program.
 */
@Command(name = "ping-pong", mixinStandardHelpOptions = true,
        description = "Send/receive ping-pong through the RDMA CM, contents verified.")
public final class PingPong implements Callable<Integer> {

    private static final Duration STEP = Duration.ofSeconds(5);

    @Option(names = "--fabric", defaultValue = "soft", description = "soft (default) or jna")
    String fabricName;

    @Option(names = "--count", defaultValue = "10000", description = "round trips")
    int count;

    @Option(names = "--size", defaultValue = "64", description = "message bytes")
    int size;

    @Option(names = "--address", defaultValue = "127.0.0.1", description = "the listener's address")
    String address;

    /** One side of the connection: its id, PD, CQ, QP and one registered buffer. */
    private static final class Endpoint implements AutoCloseable {
        final CmId id;
        ProtectionDomain pd;
        CompletionQueue cq;
        QueuePair qp;
        MemoryRegion sendBuffer;
        MemoryRegion recvBuffer;

        Endpoint(CmId id) {
            this.id = id;
        }

        void setUp(int size) {
            pd = id.device().allocateProtectionDomain();
            cq = id.device().createCompletionQueue(64, null);
            qp = id.createQueuePair(pd, QpInitAttributes.rc(cq, 16, 16));
            sendBuffer = pd.register(ByteBuffer.allocateDirect(size));
            recvBuffer = pd.register(ByteBuffer.allocateDirect(size));
            qp.postReceive(ReceiveWorkRequest.of(1, recvBuffer.sge()));
        }

        WorkCompletion next() {
            WorkCompletion[] wc = new WorkCompletion[1];
            long deadline = System.nanoTime() + STEP.toNanos();
            while (cq.poll(wc) == 0) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("no completion within " + STEP);
                }
                Thread.onSpinWait();
            }
            if (!wc[0].isSuccess()) {
                throw new IllegalStateException("work request failed: " + wc[0]);
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
        try (Fabric fabric = Fabric.open(fabricName, Map.of())) {
            EventChannel serverEvents = fabric.createEventChannel();
            EventChannel clientEvents = fabric.createEventChannel();
            CmId listener = fabric.createCmId(serverEvents, PortSpace.TCP);
            listener.bind(new InetSocketAddress(address, 0));
            listener.listen(8);

            Endpoint client = new Endpoint(fabric.createCmId(clientEvents, PortSpace.TCP));
            client.id.resolveAddress(null, listener.localAddress(), STEP);
            CmEvents.expect(clientEvents, CmEvent.AddrResolved.class, STEP);
            client.id.resolveRoute(STEP);
            CmEvents.expect(clientEvents, CmEvent.RouteResolved.class, STEP);
            client.setUp(size);
            byte[] request = ByteBuffer.allocate(8).putInt(count).putInt(size).array();
            client.id.connect(ConnectionParameters.of(request));

            CmEvent.ConnectRequest req = CmEvents.expect(serverEvents, CmEvent.ConnectRequest.class, STEP);
            ByteBuffer asked = ByteBuffer.wrap(req.privateData());
            int rounds = asked.getInt();
            int bytes = asked.getInt();
            Endpoint agent = new Endpoint(serverEvents.cmId(req.id()));
            agent.setUp(bytes);
            agent.id.accept(ConnectionParameters.of(null));
            CmEvents.expect(clientEvents, CmEvent.Established.class, STEP);
            CmEvents.expect(serverEvents, CmEvent.Established.class, STEP);

            Thread echo = new Thread(() -> {
                for (int i = 0; i < rounds; i++) {
                    WorkCompletion received = agent.next();
                    ByteBuffer in = agent.recvBuffer.buffer();
                    agent.sendBuffer.buffer().put(in);
                    agent.qp.postReceive(ReceiveWorkRequest.of(1, agent.recvBuffer.sge()));
                    agent.qp.postSend(SendWorkRequest.send(2, agent.sendBuffer.sge(0, received.byteLen())));
                    agent.next();
                }
            }, "ping-pong-agent");
            echo.start();

            long start = System.nanoTime();
            for (int i = 0; i < count; i++) {
                ByteBuffer out = client.sendBuffer.buffer();
                for (int b = 0; b < size; b++) {
                    out.put((byte) (i + b));
                }
                client.qp.postSend(SendWorkRequest.send(2, client.sendBuffer.sge()));
                WorkCompletion first = client.next();
                WorkCompletion second = client.next();
                WorkCompletion recv = first.opcode() == WcOpcode.RECV ? first : second;
                ByteBuffer in = client.recvBuffer.buffer();
                for (int b = 0; b < recv.byteLen(); b++) {
                    if (in.get(b) != (byte) (i + b)) {
                        throw new IllegalStateException("round " + i + " byte " + b + " came back wrong");
                    }
                }
                client.qp.postReceive(ReceiveWorkRequest.of(1, client.recvBuffer.sge()));
            }
            long elapsed = System.nanoTime() - start;
            echo.join();

            client.id.disconnect();
            CmEvents.expect(serverEvents, CmEvent.Disconnected.class, STEP);
            agent.id.disconnect();
            CmEvents.expect(clientEvents, CmEvent.Disconnected.class, STEP);
            System.out.printf("%d round trips of %d bytes on the %s fabric, contents verified: %.2f us per round trip%n",
                    count, size, fabric.provider(), elapsed / 1000.0 / count);
            client.close();
            agent.close();
            listener.close();
            serverEvents.close();
            clientEvents.close();
            if (fabric.ledger().total() != 0) {
                throw new IllegalStateException("leaked: " + fabric.ledger());
            }
        }
        return 0;
    }
}
