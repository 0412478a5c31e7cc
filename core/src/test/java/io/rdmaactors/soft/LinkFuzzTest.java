package io.rdmaactors.soft;

import io.rdmaactors.cm.CmEvent;
import io.rdmaactors.soft.link.LinkFrame;
import io.rdmaactors.soft.link.LinkHandshake;
import io.rdmaactors.verbs.CmId;
import io.rdmaactors.verbs.CompletionQueue;
import io.rdmaactors.verbs.ConnectionParameters;
import io.rdmaactors.verbs.EventChannel;
import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.PortSpace;
import io.rdmaactors.verbs.ProtectionDomain;
import io.rdmaactors.verbs.QpInitAttributes;
import io.rdmaactors.verbs.ReceiveWorkRequest;
import io.rdmaactors.verbs.SendWorkRequest;
import io.rdmaactors.verbs.WorkCompletion;
import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Throws random, truncated, oversized and idle sockets at a listener, with and without the
 * handshake, then proves it still serves a legitimate client and that its ledger, threads and
 * file descriptors came back to where they were. The seed is in every failure message; rerun one
 * with {@code -Drdma-actors.fuzz.seed=N}.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class LinkFuzzTest {

    private static final Duration STEP = Duration.ofSeconds(20);
    private static final int ROUNDS = 300;
    /** Sockets left open at once, so that idle ones overlap with the rest. */
    private static final int OPEN_AT_ONCE = 24;

    @TempDir
    Path dir;

    @Test
    void aListenerSurvivesWhatARandomPeerSendsAndServesTheNextClient() throws Exception {
        long seed = Long.getLong("rdma-actors.fuzz.seed", System.nanoTime());
        String with = " (seed " + seed + ")";
        Random random = new Random(seed);
        String cookie = dir.resolve("cookie").toString();
        // two I/O threads, as by default: the acceptor's thread hands half the links to the other
        try (Fabric server = Fabric.open("soft", Map.of("cookie", cookie, "links.handshake.timeout.ms", "200",
                "io.threads", "2"))) {
            EventChannel events = server.createEventChannel();
            CmId listener = server.createCmId(events, PortSpace.TCP);
            listener.bind(new InetSocketAddress("127.0.0.1", 0));
            listener.listen(16);
            int port = listener.localAddress().getPort();
            byte[] secret = RawLink.secret(server);
            RawLink.open(port, secret, 0).close(); // the fabric's timer starts with its first handshake
            RawLink.eventually("the first link closed", STEP, () -> ((SoftFabric) server).links.count() == 0);
            Map<?, Long> ledger = server.ledger().snapshot();
            List<String> threads = RawLink.threadsOf(server);
            long fds = openFds();

            List<SocketChannel> open = new ArrayList<>();
            for (int round = 0; round < ROUNDS; round++) {
                open.add(attack(random, port, secret));
                if (open.size() == OPEN_AT_ONCE) {
                    closeAll(open);
                }
            }
            closeAll(open);
            RawLink.eventually("every fuzzing link closed" + with, STEP,
                    () -> ((SoftFabric) server).links.count() == 0);
            for (CmEvent e; (e = events.await(Duration.ofMillis(200))) != null; ) {
                // random bytes that happen to make a valid REQ are a request like any: refuse it
                events.cmId(assertInstanceOf(CmEvent.ConnectRequest.class, e, "an event of a fuzzing link" + with)
                        .id()).close();
            }

            try (Fabric client = Fabric.open("soft", Map.of("cookie", cookie, "transport", "tcp"))) {
                exchange(client, server, events, port);
            }
            RawLink.eventually("the client's link closed" + with, STEP, () -> ((SoftFabric) server).links.count() == 0);
            RawLink.eventually("the ledger is where it was" + with, STEP,
                    () -> server.ledger().snapshot().equals(ledger));
            assertEquals(threads, RawLink.threadsOf(server), "no thread more or less" + with);
            RawLink.eventually("file descriptors are back to where they were" + with, STEP, () -> openFds() <= fds);
        }
    }

    /** One socket doing one random wrong thing; null when it closed at once. */
    private static SocketChannel attack(Random random, int port, byte[] secret) throws IOException {
        int kind = random.nextInt(7);
        SocketChannel s = kind >= 4 ? RawLink.open(port, secret, 0) : RawLink.connect(port, 0);
        try {
            switch (kind) {
                case 0 -> send(s, bytes(random, random.nextInt(256))); // noise
                case 1 -> send(s, ByteBuffer.allocate(9).putInt(37).put(LinkHandshake.HELLO).putInt(LinkHandshake.MAGIC)
                        .array()); // a HELLO cut short
                case 2 -> { } // silence: the handshake timeout ends it
                case 3 -> send(s, ByteBuffer.allocate(4).putInt(random.nextInt()).array()); // any length
                case 4 -> send(s, ByteBuffer.allocate(9).putInt(random.nextInt(Integer.MAX_VALUE)).put(LinkFrame.PACKET)
                        .putInt(random.nextInt()).array()); // an authenticated peer announces a huge frame
                case 5 -> { // a frame of a random tag and body
                    int length = 5 + random.nextInt(200);
                    ByteBuffer frame = ByteBuffer.allocate(4 + length).putInt(length);
                    frame.put((byte) random.nextInt(4)).putInt(1 + random.nextInt(4)).put(bytes(random, length - 5));
                    send(s, frame.array());
                }
                default -> { } // authenticated and idle
            }
        } catch (IOException ended) {
            // the listener ended it already
        }
        if (random.nextInt(4) == 0) {
            s.close();
            return null;
        }
        return s;
    }

    private static void send(SocketChannel s, byte[] bytes) throws IOException {
        s.write(ByteBuffer.wrap(bytes));
    }

    private static byte[] bytes(Random random, int n) {
        byte[] b = new byte[n];
        random.nextBytes(b);
        return b;
    }

    private static void closeAll(List<SocketChannel> open) throws IOException {
        for (SocketChannel s : open) {
            if (s != null) {
                s.close();
            }
        }
        open.clear();
    }

    /** A connection from {@code client} that delivers one Send to the server's agent. */
    private static void exchange(Fabric client, Fabric server, EventChannel serverEvents, int port) throws Exception {
        EventChannel events = client.createEventChannel();
        CmId id = RawLink.resolvedTo(client, events, port);
        ProtectionDomain pd = client.devices().get(0).allocateProtectionDomain();
        CompletionQueue cq = client.devices().get(0).createCompletionQueue(16, null);
        MemoryRegion memory = pd.register(ByteBuffer.allocateDirect(64));
        id.createQueuePair(pd, QpInitAttributes.rc(cq, 4, 4));
        id.connect(ConnectionParameters.of(null));

        CmEvent.ConnectRequest request = assertInstanceOf(CmEvent.ConnectRequest.class, serverEvents.await(STEP));
        CmId agent = serverEvents.cmId(request.id());
        ProtectionDomain serverPd = server.devices().get(0).allocateProtectionDomain();
        CompletionQueue serverCq = server.devices().get(0).createCompletionQueue(16, null);
        MemoryRegion serverMemory = serverPd.register(ByteBuffer.allocateDirect(64));
        agent.createQueuePair(serverPd, QpInitAttributes.rc(serverCq, 4, 4));
        agent.queuePair().postReceive(ReceiveWorkRequest.of(1, serverMemory.sge(0, 64)));
        agent.accept(ConnectionParameters.of(null));
        assertInstanceOf(CmEvent.Established.class, events.await(STEP));
        assertInstanceOf(CmEvent.Established.class, serverEvents.await(STEP));

        memory.buffer().putLong(0, 0x5EED);
        id.queuePair().postSend(SendWorkRequest.send(2, memory.sge(0, 8)));
        WorkCompletion[] wcs = new WorkCompletion[1];
        long deadline = System.nanoTime() + STEP.toNanos();
        while (serverCq.poll(wcs) == 0) {
            assertTrue(System.nanoTime() < deadline, "the legitimate client's Send arrives");
            Thread.sleep(1);
        }
        assertTrue(wcs[0].isSuccess(), wcs[0].toString());
        assertEquals(0x5EED, serverMemory.buffer().getLong(0));

        id.disconnect();
        assertInstanceOf(CmEvent.Disconnected.class, serverEvents.await(STEP));
        agent.close();
        serverMemory.close();
        serverCq.close();
        serverPd.close();
    }

    private static long openFds() {
        String[] fds = new File("/proc/self/fd").list();
        return fds == null ? 0 : fds.length;
    }
}
