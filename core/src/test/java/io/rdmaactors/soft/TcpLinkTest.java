package io.rdmaactors.soft;

import io.rdmaactors.cm.CmEvent;
import io.rdmaactors.soft.link.LinkAcceptor;
import io.rdmaactors.soft.link.LinkConnection;
import io.rdmaactors.soft.link.LinkFrame;
import io.rdmaactors.soft.link.LinkSelector;
import io.rdmaactors.soft.link.TcpLink;
import io.rdmaactors.soft.wire.CmMessage;
import io.rdmaactors.verbs.Access;
import io.rdmaactors.verbs.CmId;
import io.rdmaactors.verbs.CompletionQueue;
import io.rdmaactors.verbs.ConnectionParameters;
import io.rdmaactors.verbs.EventChannel;
import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.PortSpace;
import io.rdmaactors.verbs.ProtectionDomain;
import io.rdmaactors.verbs.QpAttributes;
import io.rdmaactors.verbs.QpInitAttributes;
import io.rdmaactors.verbs.QpState;
import io.rdmaactors.verbs.ReceiveWorkRequest;
import io.rdmaactors.verbs.ResourceKind;
import io.rdmaactors.verbs.SendWorkRequest;
import io.rdmaactors.verbs.WcOpcode;
import io.rdmaactors.verbs.WcStatus;
import io.rdmaactors.verbs.WorkCompletion;
import java.io.DataOutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The link between processes: a fixed number of I/O threads, one socket for every connection to
 * a peer's listener, faults on one connection of a shared link, and a link fed garbage ending
 * alone. The client fabric uses {@code transport=tcp}, so its ids reach the server fabric's
 * listener over a link as they would from another process; {@link SharedMemoryLinkTest} runs the
 * same with {@code transport=shm}.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TcpLinkTest {

    private static final Duration STEP = Duration.ofSeconds(10);
    private static final int SLOT = 64;

    private Fabric server;
    private EventChannel serverEvents;
    private CmId listener;
    private ProtectionDomain serverPd;
    private CompletionQueue serverCq;
    private MemoryRegion serverMemory;
    private final List<Fabric> clients = new ArrayList<>();

    @BeforeEach
    void listen() {
        server = Fabric.open("soft");
        serverEvents = server.createEventChannel();
        listener = server.createCmId(serverEvents, PortSpace.TCP);
        listener.bind(new InetSocketAddress("127.0.0.1", 0));
        listener.listen(16);
        serverPd = server.devices().get(0).allocateProtectionDomain();
        serverCq = server.devices().get(0).createCompletionQueue(4096, null);
        serverMemory = serverPd.register(ByteBuffer.allocateDirect(256 * SLOT));
    }

    @AfterEach
    void close() {
        clients.forEach(Fabric::close);
        server.close();
    }

    /** One client fabric: its ids share one PD, CQ and memory. */
    private final class Client {
        final Fabric fabric;
        final EventChannel events;
        final ProtectionDomain pd;
        final CompletionQueue cq;
        final MemoryRegion memory;

        Client() {
            this(Map.of());
        }

        Client(Map<String, String> options) {
            Map<String, String> all = new HashMap<>(options);
            all.put("transport", transport());
            fabric = Fabric.open("soft", all);
            clients.add(fabric);
            events = fabric.createEventChannel();
            pd = fabric.devices().get(0).allocateProtectionDomain();
            cq = fabric.devices().get(0).createCompletionQueue(4096, null);
            memory = pd.register(ByteBuffer.allocateDirect(256 * SLOT));
        }


        /** A connection to the server's listener: this side's id, then the server's. */
        CmId[] connect() throws Exception {
            return connect(ConnectionParameters.of(null));
        }

        CmId[] connect(ConnectionParameters parameters) throws Exception {
            CmId id = fabric.createCmId(events, PortSpace.TCP);
            id.resolveAddress(null, listener.localAddress(), STEP);
            assertInstanceOf(CmEvent.AddrResolved.class, events.await(STEP));
            id.resolveRoute(STEP);
            assertInstanceOf(CmEvent.RouteResolved.class, events.await(STEP));
            id.createQueuePair(pd, QpInitAttributes.rc(cq, 16, 16));
            id.connect(parameters);
            CmEvent.ConnectRequest request = assertInstanceOf(CmEvent.ConnectRequest.class, serverEvents.await(STEP));
            CmId agent = serverEvents.cmId(request.id());
            agent.createQueuePair(serverPd, QpInitAttributes.rc(serverCq, 16, 16));
            agent.accept(ConnectionParameters.of(null));
            assertInstanceOf(CmEvent.Established.class, events.await(STEP));
            assertInstanceOf(CmEvent.Established.class, serverEvents.await(STEP));
            return new CmId[] {id, agent};
        }
    }

    /** Each client id sends its index to its agent, which must receive it in its own slot. */
    private void exchange(Client client, List<CmId[]> connections, List<Integer> which) throws Exception {
        for (int i : which) {
            CmId agent = connections.get(i)[1];
            agent.queuePair().postReceive(ReceiveWorkRequest.of(i, serverMemory.sge(i * SLOT, SLOT)));
            client.memory.buffer().putInt(i * SLOT, 1000 + i);
            connections.get(i)[0].queuePair().postSend(SendWorkRequest.send(i, client.memory.sge(i * SLOT, 4)));
        }
        List<Integer> arrived = new ArrayList<>();
        WorkCompletion[] wcs = new WorkCompletion[64];
        long deadline = System.nanoTime() + STEP.toNanos();
        while (arrived.size() < which.size() && System.nanoTime() < deadline) {
            int n = serverCq.poll(wcs);
            for (int k = 0; k < n; k++) {
                assertTrue(wcs[k].isSuccess(), wcs[k].toString());
                assertEquals(WcOpcode.RECV, wcs[k].opcode());
                int i = (int) wcs[k].wrId();
                assertEquals(connections.get(i)[1].queuePair().qpNum(), wcs[k].qpNum(), "received on its own QP");
                assertEquals(1000 + i, serverMemory.buffer().getInt(i * SLOT), "connection " + i);
                arrived.add(i);
            }
        }
        assertEquals(which.stream().sorted().toList(), arrived.stream().sorted().toList());
    }

    private static List<Integer> range(int from, int to) {
        List<Integer> list = new ArrayList<>();
        for (int i = from; i < to; i++) {
            list.add(i);
        }
        return list;
    }

    /** The client's {@code transport} option. */
    String transport() {
        return "tcp";
    }

    private static int links(Fabric fabric) {
        return ((SoftFabric) fabric).links.count();
    }

    @Test
    void aLinkGoesThroughSharedMemoryWhereTheTransportAllowsIt() throws Exception {
        Client client = new Client();
        List<CmId[]> connections = List.<CmId[]>of(client.connect());
        exchange(client, connections, List.of(0));
        long expected = transport().equals("shm") ? 1 : 0;
        assertEquals(expected, ((SoftFabric) client.fabric).links.sharingMemory(), "the client's link");
        assertEquals(expected, ((SoftFabric) server).links.sharingMemory(), "the server's link");
    }

    /**
     * A consumer polling its CQ reads the link itself, as UCX's progress does: with every I/O
     * thread of both fabrics held up, a Send still arrives at the polling receiver, and its ACK,
     * written by that poller, completes it at the polling sender.
     */
    @Test
    void aConsumerPollingItsCqReadsTheLinkWithoutTheIoThreads() throws Exception {
        Client client = new Client();
        CmId[] connection = client.connect();
        CountDownLatch release = new CountDownLatch(1);
        List<LinkSelector> held = new ArrayList<>(((SoftFabric) server).links.ioThreads());
        held.addAll(((SoftFabric) client.fabric).links.ioThreads());
        CountDownLatch holding = new CountDownLatch(held.size());
        for (LinkSelector ioThread : held) {
            ioThread.later(() -> {
                holding.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
        }
        try {
            assertTrue(holding.await(10, TimeUnit.SECONDS), "every I/O thread held");
            connection[1].queuePair().postReceive(ReceiveWorkRequest.of(3, serverMemory.sge(0, SLOT)));
            client.memory.buffer().putInt(0, 4242);
            connection[0].queuePair().postSend(SendWorkRequest.send(7, client.memory.sge(0, 4)));
            WorkCompletion received = pollOne(serverCq);
            assertEquals(WcOpcode.RECV, received.opcode());
            assertEquals(4242, serverMemory.buffer().getInt(0));
            WorkCompletion sent = pollOne(client.cq);
            assertEquals(WcOpcode.SEND, sent.opcode());
            assertEquals(7, sent.wrId());
        } finally {
            release.countDown();
        }
    }

    /** A CQ's polls read the links its connections run on, and only while one does. */
    @Test
    void aCqPollProgressesWhileAConnectionOfItRunsOnALink() throws Exception {
        Client client = new Client();
        assertFalse(client.cq.pollProgresses(), "no connection yet");
        CmId[] connection = client.connect();
        assertTrue(client.cq.pollProgresses(), "the client's side");
        assertTrue(serverCq.pollProgresses(), "the listener's side");
        connection[0].destroyQueuePair();
        assertFalse(client.cq.pollProgresses(), "its QP gone");
    }

    /**
     * A poller that read a request leaves its ACK for a frame of its own to take along; one that
     * then stops polling and posts nothing still has the ACK sent, so the Send completes at the
     * sender while the receiver does nothing. The sender may not retransmit (retry count 0): a
     * retransmission would fetch the ACK too, but ends the Send in RETRY_EXC_ERR here.
     */
    @Test
    void theAckOfAReceiverThatStopsPollingStillGoesOut() throws Exception {
        Client client = new Client();
        CmId[] connection = client.connect(new ConnectionParameters(null, 16, 16, 0, 7));
        for (int i = 0; i < 200; i++) {
            connection[1].queuePair().postReceive(ReceiveWorkRequest.of(i, serverMemory.sge(0, SLOT)));
            connection[0].queuePair().postSend(SendWorkRequest.send(i, client.memory.sge(0, 4)));
            assertEquals(WcOpcode.RECV, pollOne(serverCq).opcode()); // then the receiver polls no more
            WorkCompletion sent = pollOne(client.cq);
            assertEquals(WcOpcode.SEND, sent.opcode());
            assertEquals(i, sent.wrId());
        }
    }

    /**
     * A poller that stops while it holds a link's reading (held at the receiving QP's lock here,
     * as a descheduled thread would be) leaves the socket readable when more comes: the I/O
     * threads wait for it to hand the reading back rather than spin on that readiness, which on
     * a busy machine took the core the poller needed. Once it goes on, everything is delivered.
     */
    @Test
    void ioThreadsWaitForAPollerHoldingTheLinkRatherThanSpin() throws Exception {
        Client client = new Client();
        CmId[] connection = client.connect();
        SoftQueuePair receiver = (SoftQueuePair) connection[1].queuePair();
        for (int i = 0; i < 3; i++) {
            receiver.postReceive(ReceiveWorkRequest.of(i, serverMemory.sge(i * SLOT, SLOT)));
        }
        // a first Send's ACK tells the sender of the receives left, so that two more may go at once
        connection[0].queuePair().postSend(SendWorkRequest.send(0, client.memory.sge(0, 4)));
        assertEquals(0, pollOne(serverCq).wrId());
        assertEquals(0, pollOne(client.cq).wrId());
        BlockingQueue<WorkCompletion> received = new LinkedBlockingQueue<>();
        AtomicBoolean stop = new AtomicBoolean();
        Thread poller = new Thread(() -> {
            WorkCompletion[] wcs = new WorkCompletion[4];
            while (!stop.get()) {
                for (int k = 0, n = serverCq.poll(wcs); k < n; k++) {
                    received.add(wcs[k]);
                }
            }
        }, "poller");
        ThreadMXBean cpu = ManagementFactory.getThreadMXBean();
        CountDownLatch release = new CountDownLatch(1);
        receiver.recvLock.lock();
        try {
            List<LinkSelector> serverIoThreads = ((SoftFabric) server).links.ioThreads();
            CountDownLatch ioThreadsHeld = new CountDownLatch(serverIoThreads.size());
            for (LinkSelector ioThread : serverIoThreads) {
                ioThread.later(() -> { // so that the poller reads the first Send
                    ioThreadsHeld.countDown();
                    try {
                        release.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
            }
            // before the Send: an I/O thread still free could take its doorbell and read it first
            assertTrue(ioThreadsHeld.await(STEP.toMillis(), TimeUnit.MILLISECONDS), "the server's I/O threads held");
            poller.start();
            connection[0].queuePair().postSend(SendWorkRequest.send(1, client.memory.sge(0, 4)));
            RawLink.eventually("the poller held at the receiver's lock", STEP,
                    () -> receiver.recvLock.hasQueuedThread(poller));
            release.countDown();
            connection[0].queuePair().postSend(SendWorkRequest.send(2, client.memory.sge(0, 4)));
            Thread.sleep(50); // the second Send is on the socket, unread
            List<Thread> ioThreads = Stream.of(server, client.fabric).flatMap(f -> RawLink.liveThreadsOf(f).stream())
                    .filter(t -> t.getName().contains("-io-")).toList();
            assertFalse(ioThreads.isEmpty(), "the fabrics' I/O threads");
            long before = ioThreads.stream().mapToLong(t -> cpu.getThreadCpuTime(t.getId())).sum();
            long held = 300;
            Thread.sleep(held);
            long spent = ioThreads.stream().mapToLong(t -> cpu.getThreadCpuTime(t.getId())).sum() - before;
            assertTrue(spent < TimeUnit.MILLISECONDS.toNanos(held) / 4,
                    "the I/O threads took " + spent / 1_000_000 + " ms of CPU in " + held + " ms");
            receiver.recvLock.unlock();
            for (int i = 1; i < 3; i++) {
                WorkCompletion wc = received.poll(10, TimeUnit.SECONDS);
                assertNotNull(wc, "receive " + i);
                assertTrue(wc.isSuccess(), wc.toString());
                assertEquals(i, wc.wrId());
            }
        } finally {
            release.countDown();
            if (receiver.recvLock.isHeldByCurrentThread()) {
                receiver.recvLock.unlock();
            }
            stop.set(true);
            poller.join();
        }
    }

    /**
     * An accept that failed (the process out of file descriptors, say) pauses the listener, where
     * its socket, still ready, would have the I/O thread retry and log at once, again and again;
     * then the listener takes the connection that waited.
     */
    @Test
    void aListenerWhoseAcceptFailedPausesThenAcceptsAgain() throws Exception {
        try (ServerSocketChannel socket = ServerSocketChannel.open()) {
            socket.bind(new InetSocketAddress("127.0.0.1", 0));
            LinkAcceptor acceptor = ((SoftFabric) server).links.listen(socket, null);
            acceptor.failed(new java.io.IOException("Too many open files (a test's)"));
            Thread.sleep(LinkAcceptor.PAUSE_AFTER_FAILURE_MS / 10); // the I/O thread pauses the listener
            try (SocketChannel peer = SocketChannel.open(socket.getLocalAddress())) {
                assertTrue(peer.isConnected(), "in the listener's backlog");
                Thread.sleep(LinkAcceptor.PAUSE_AFTER_FAILURE_MS / 4);
                assertEquals(0, acceptor.links(), "taken while paused");
                RawLink.eventually("the waiting connection taken", STEP, () -> acceptor.links() == 1);
            } finally {
                acceptor.close();
            }
        }
    }

    /** Busy-polls {@code cq} for its next completion, which must be a success. */
    private static WorkCompletion pollOne(CompletionQueue cq) {
        WorkCompletion[] wcs = new WorkCompletion[1];
        long deadline = System.nanoTime() + STEP.toNanos();
        while (System.nanoTime() < deadline) {
            if (cq.poll(wcs) == 1) {
                assertTrue(wcs[0].isSuccess(), wcs[0].toString());
                return wcs[0];
            }
        }
        throw new AssertionError("no completion within " + STEP);
    }

    @Test
    void threadsAndSocketsDoNotGrowWithConnections() throws Exception {
        Client client = new Client();
        List<CmId[]> connections = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            connections.add(client.connect());
        }
        exchange(client, connections, range(0, 10));
        List<String> clientThreads = RawLink.threadsOf(client.fabric);
        List<String> serverThreads = RawLink.threadsOf(server);
        assertEquals(1, links(client.fabric), "one link from the client to the listener");
        assertEquals(1, links(server), "one link accepted by the listener");

        for (int i = 10; i < 200; i++) {
            connections.add(client.connect());
        }
        exchange(client, connections, range(0, 200));
        assertEquals(clientThreads, RawLink.threadsOf(client.fabric), "the client's threads at 10 and 200 connections");
        assertEquals(serverThreads, RawLink.threadsOf(server), "the server's threads at 10 and 200 connections");
        assertTrue(clientThreads.stream().anyMatch(n -> n.contains("-io-")), clientThreads.toString());
        assertEquals(1, links(client.fabric), "200 connections share one socket");
        assertEquals(1, links(server));

        for (CmId[] c : connections) {
            c[0].close();
        }
        RawLink.eventually("the client closes the link its last connection left", STEP,
                () -> links(client.fabric) == 0);
        RawLink.eventually("the server sees the link end", STEP, () -> links(server) == 0);
        for (CmId[] c : connections) {
            c[1].close();
        }
        client.fabric.close();
        RawLink.eventually("the client's threads stop with its fabric", STEP,
                () -> RawLink.threadsOf(client.fabric).isEmpty());
    }

    /**
     * Writes still waiting in the link's outbox when their QP enters ERR stay home: their flush
     * completions gave the buffers back, so what the application puts there next must not reach
     * the peer. Only the frames of the gathering write under way may still go (at most 8).
     */
    @Test
    void framesOfAFlushedQpStayInTheOutbox() throws Exception {
        int size = 512 << 10;
        int count = 128;
        Client client = new Client();
        CmId id = client.fabric.createCmId(client.events, PortSpace.TCP);
        id.resolveAddress(null, listener.localAddress(), STEP);
        assertInstanceOf(CmEvent.AddrResolved.class, client.events.await(STEP));
        id.resolveRoute(STEP);
        assertInstanceOf(CmEvent.RouteResolved.class, client.events.await(STEP));
        id.createQueuePair(client.pd, QpInitAttributes.rc(client.cq, count, 1));
        id.connect(ConnectionParameters.of(null));
        CmEvent.ConnectRequest request = assertInstanceOf(CmEvent.ConnectRequest.class, serverEvents.await(STEP));
        CmId agent = serverEvents.cmId(request.id());
        agent.createQueuePair(serverPd, QpInitAttributes.rc(serverCq, 1, 1));
        agent.accept(ConnectionParameters.of(null));
        assertInstanceOf(CmEvent.Established.class, client.events.await(STEP));
        assertInstanceOf(CmEvent.Established.class, serverEvents.await(STEP));
        MemoryRegion source = client.pd.register(ByteBuffer.allocateDirect(count * size));
        MemoryRegion target = serverPd.register(ByteBuffer.allocateDirect(count * size),
                Set.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
        SendWorkRequest[] writes = new SendWorkRequest[count];
        for (int i = 0; i < count; i++) {
            writes[i] = SendWorkRequest.write(i, target.address() + (long) i * size, target.rkey(),
                    source.sge(i * size, size));
        }

        id.queuePair().postSend(writes);
        id.queuePair().modify(QpAttributes.of().state(QpState.ERR));
        WorkCompletion[] wcs = new WorkCompletion[count];
        int completed = 0;
        long deadline = System.nanoTime() + STEP.toNanos();
        while (completed < count && System.nanoTime() < deadline) {
            completed += client.cq.poll(wcs);
        }
        assertEquals(count, completed, "every write completed or flushed");
        for (int i = 0; i < count; i++) {
            source.buffer().put(i * size, (byte) 1); // the application's next messages
        }
        id.disconnect(); // its DREQ follows the connection's frames
        assertInstanceOf(CmEvent.Disconnected.class, serverEvents.await(STEP));

        int marked = 0;
        for (int i = 0; i < count; i++) {
            marked += target.buffer().get(i * size);
        }
        assertTrue(marked <= TcpLink.GATHERED_PAYLOADS, marked + " writes carried memory given back by their flush");
        agent.close();
        id.close();
        source.close();
        target.close();
    }

    /**
     * Sends around a small ring's size, posted at once so the ring fills: frames that wrap past
     * its end, frames written in parts as room frees, and frames larger than the ring, each
     * received whole and in order.
     */
    @Test
    void sendsAroundTheRingsSizeArriveWhole() throws Exception {
        int[] sizes = {100, 1000, 3000, 4000, 4100, 9000, 2500, 17, 3900, 3900};
        int slot = 16 << 10;
        Client client = new Client(Map.of("links.shm.bytes", "4096"));
        CmId[] c = client.connect();
        MemoryRegion from = client.pd.register(ByteBuffer.allocateDirect(sizes.length * slot));
        MemoryRegion into = serverPd.register(ByteBuffer.allocateDirect(sizes.length * slot));
        ByteBuffer sent = from.buffer();
        for (int i = 0; i < sizes.length; i++) {
            c[1].queuePair().postReceive(ReceiveWorkRequest.of(i, into.sge(i * slot, slot)));
            for (int b = 0; b < sizes[i]; b++) {
                sent.put(i * slot + b, (byte) (i * 31 + b * 7));
            }
        }
        for (int i = 0; i < sizes.length; i++) {
            c[0].queuePair().postSend(SendWorkRequest.send(i, from.sge(i * slot, sizes[i])));
        }
        WorkCompletion[] wc = new WorkCompletion[16];
        long deadline = System.nanoTime() + STEP.toNanos();
        for (int received = 0; received < sizes.length; ) {
            assertTrue(System.nanoTime() < deadline, received + " of " + sizes.length + " received");
            int n = serverCq.poll(wc);
            for (int k = 0; k < n; k++) {
                assertTrue(wc[k].isSuccess(), wc[k].toString());
                int i = (int) wc[k].wrId();
                assertEquals(received++, i, "in order");
                assertEquals(sizes[i], wc[k].byteLen());
                assertEquals(sent.slice(i * slot, sizes[i]), into.buffer().slice(i * slot, sizes[i]),
                        "message " + i + " of " + sizes[i] + " bytes");
            }
        }
        c[0].close();
        c[1].close();
        from.close();
        into.close();
    }

    /**
     * A READ larger than a segment comes back in segments over a link, each scattered where it
     * belongs (here across two SGEs whose border no segment shares), and completes with the last.
     */
    @Test
    void aLargeReadComesBackInSegmentsIntoItsSges() throws Exception {
        int size = 2 * LinkConnection.READ_SEGMENT + 12_345;
        int first = 100_000;
        Client client = new Client();
        CmId[] c = client.connect();
        MemoryRegion source = serverPd.register(ByteBuffer.allocateDirect(size),
                Set.of(Access.LOCAL_WRITE, Access.REMOTE_READ));
        for (int i = 0; i < size; i++) {
            source.buffer().put(i, (byte) (i * 31 + 7));
        }
        MemoryRegion into = client.pd.register(ByteBuffer.allocateDirect(size));
        c[0].queuePair().postSend(SendWorkRequest.read(1, source.address(), source.rkey(), into.sge(0, first),
                into.sge(first, size - first)));
        WorkCompletion[] wc = new WorkCompletion[1];
        long deadline = System.nanoTime() + STEP.toNanos();
        while (client.cq.poll(wc) == 0) {
            assertTrue(System.nanoTime() < deadline, "the READ completes");
        }
        assertTrue(wc[0].isSuccess(), wc[0].toString());
        assertEquals(size, wc[0].byteLen());
        assertEquals(source.buffer(), into.buffer(), "every byte where it belongs");
        c[0].close();
        c[1].close();
        source.close();
        into.close();
    }

    /** The connecting side closes a link once its last connection ended, whichever side ended it. */
    @Test
    void aLinkWhoseLastConnectionTheListenersSideEndedCloses() throws Exception {
        Client client = new Client();
        CmId[] c = client.connect();
        exchange(client, List.<CmId[]>of(c), List.of(0));
        c[1].close(); // the accepting side ends it
        assertInstanceOf(CmEvent.Disconnected.class, client.events.await(STEP));
        c[0].close();
        RawLink.eventually("the client closes the link nobody uses", STEP, () -> links(client.fabric) == 0);
        RawLink.eventually("the server sees the link end", STEP, () -> links(server) == 0);
    }

    /**
     * The ledger counts a link while a connection is on it: once the last id on each side has
     * closed, neither ledger counts it, without waiting for the sockets to close (a leak check
     * right after the closes sees the truth), in both orders of closing.
     */
    @Test
    void theLedgerForgetsALinkWhenTheLastIdOnItHasClosed() throws Exception {
        Client client = new Client();
        for (boolean connectingSideFirst : List.of(true, false)) {
            for (int round = 0; round < 20; round++) {
                CmId[] c = client.connect();
                assertEquals(1, linksInUse(client.fabric), "the client's ledger counts the link in use");
                assertEquals(1, linksInUse(server), "so does the server's");
                CmId first = c[connectingSideFirst ? 0 : 1];
                CmId second = c[connectingSideFirst ? 1 : 0];
                first.disconnect();
                assertInstanceOf(CmEvent.Disconnected.class, second.channel().await(STEP));
                second.disconnect(); // the DREP
                assertInstanceOf(CmEvent.Disconnected.class, first.channel().await(STEP));
                first.close();
                second.close();
                assertEquals(0, linksInUse(client.fabric), "round " + round + ": the client's ledger");
                assertEquals(0, linksInUse(server), "round " + round + ": the server's ledger");
            }
        }
    }

    private static long linksInUse(Fabric fabric) {
        return fabric.ledger().live(ResourceKind.LINK);
    }

    @Test
    void twoIoThreadsByDefault() throws Exception {
        Client client = new Client();
        exchange(client, List.<CmId[]>of(client.connect()), List.of(0));
        String prefix = "rdma-" + ((SoftFabric) client.fabric).id + "-io-";
        assertEquals(List.of(prefix + 0, prefix + 1),
                RawLink.threadsOf(client.fabric).stream().filter(n -> n.startsWith(prefix)).toList());
    }

    @Test
    void aNewLinkGoesToTheIoThreadWithTheFewestLinks() throws Exception {
        Client first = new Client();
        Client second = new Client();
        first.connect();
        second.connect();
        assertEquals(List.of(1, 1), ((SoftFabric) server).links.linksPerThread(), "one link per thread");
        second.fabric.close();
        assertInstanceOf(CmEvent.Disconnected.class, serverEvents.await(STEP));
        RawLink.eventually("the second link ended", STEP, () -> links(server) == 1);
        Client third = new Client();
        List<CmId[]> connections = List.<CmId[]>of(third.connect());
        assertEquals(List.of(1, 1), ((SoftFabric) server).links.linksPerThread(),
                "the new link went where the ended one was");
        exchange(third, connections, List.of(0));
    }

    @Test
    void ioThreadsIsTheNumberOfIoThreads() throws Exception {
        Client client = new Client(Map.of("io.threads", "3"));
        assertEquals(List.of(), RawLink.threadsOf(client.fabric).stream().filter(n -> n.contains("-io-")).toList(),
                "no I/O thread before the first link");
        List<CmId[]> connections = List.of(client.connect(), client.connect());
        exchange(client, connections, List.of(0, 1));
        String prefix = "rdma-" + ((SoftFabric) client.fabric).id + "-io-";
        assertEquals(List.of(prefix + 0, prefix + 1, prefix + 2),
                RawLink.threadsOf(client.fabric).stream().filter(n -> n.startsWith(prefix)).toList());
    }

    @Test
    void closingAFabricClosesItsLinksAndThreads() throws Exception {
        Client client = new Client();
        List<CmId[]> connections = List.of(client.connect(), client.connect());
        assertEquals(1, links(client.fabric));
        client.fabric.close();
        assertEquals(0, links(client.fabric), "closed with the fabric");
        Set<Long> disconnected = new HashSet<>();
        for (int i = 0; i < connections.size(); i++) {
            disconnected.add(assertInstanceOf(CmEvent.Disconnected.class, serverEvents.await(STEP)).id());
        }
        assertEquals(Set.of(connections.get(0)[1].handle(), connections.get(1)[1].handle()), disconnected,
                "the peer hears every connection end");
        RawLink.eventually("the peer's side of the link ends", STEP, () -> links(server) == 0);
        RawLink.eventually("no thread outlives the fabric", STEP, () -> RawLink.threadsOf(client.fabric).isEmpty());
    }

    @Test
    void aFaultActsOnOneConnectionOfASharedLink() throws Exception {
        Client client = new Client();
        List<CmId[]> connections = List.of(client.connect(), client.connect(), client.connect());
        assertEquals(1, links(client.fabric));

        server.faults().orElseThrow().dropConnection(connections.get(1)[1]);
        client.fabric.faults().orElseThrow().killPeer(connections.get(0)[0]);
        CmEvent gone = client.events.await(STEP);
        assertEquals(new CmEvent.Disconnected(connections.get(0)[0].handle()), gone, "the killed peer's connection");
        CmEvent heard = serverEvents.await(STEP);
        assertEquals(new CmEvent.Disconnected(connections.get(0)[1].handle()), heard,
                "the connection of the killed peer ends on the server, as after a process's death");

        exchange(client, connections, List.of(2));
        assertNull(client.events.await(Duration.ofMillis(100)), "nothing happened to the other connections");
        assertNull(serverEvents.await(Duration.ofMillis(100)));
        assertEquals(1, links(client.fabric), "the link stays for the connections left");
    }

    @Test
    void aLinkThatFailsEndsEveryConnectionOnIt() throws Exception {
        SocketChannel raw = RawLink.open(listener.localAddress().getPort(), RawLink.secret(server), 0);
        // three REQs over one socket, as a peer process's link carries them
        ByteBuffer frames = ByteBuffer.allocate(1024);
        byte[] gid = fabricGid();
        for (int number = 1; number <= 3; number++) {
            CmMessage req = new CmMessage(CmMessage.Type.REQ, 100 + number, 0, gid, 1, 0, 16, 16, 7, 7, new byte[0],
                    new InetSocketAddress("127.0.0.1", 40000 + number), listener.localAddress());
            new LinkFrame(new LinkConnection(null, number, null), null, req).encode(frames, true);
        }
        raw.socket().getOutputStream().write(frames.array(), 0, frames.position());
        Set<Long> agents = new HashSet<>();
        Set<Long> receives = new HashSet<>();
        for (int i = 0; i < 3; i++) {
            CmEvent.ConnectRequest request = assertInstanceOf(CmEvent.ConnectRequest.class, serverEvents.await(STEP));
            CmId agent = serverEvents.cmId(request.id());
            agent.createQueuePair(serverPd, QpInitAttributes.rc(serverCq, 16, 16));
            for (int r = 0; r < 4; r++) {
                long wrId = i * 10L + r;
                agent.queuePair().postReceive(ReceiveWorkRequest.of(wrId, serverMemory.sge((int) wrId * SLOT, SLOT)));
                receives.add(wrId);
            }
            agent.accept(ConnectionParameters.of(null));
            agents.add(agent.handle());
        }
        raw.socket().setSoLinger(true, 0);
        raw.close(); // a reset, as from a process killed

        Set<Long> disconnected = new HashSet<>();
        for (int i = 0; i < 3; i++) {
            disconnected.add(assertInstanceOf(CmEvent.Disconnected.class, serverEvents.await(STEP)).id());
        }
        assertEquals(agents, disconnected, "every connection on the link that failed");
        for (long agent : agents) {
            serverEvents.cmId(agent).disconnect();
        }
        WorkCompletion[] wcs = new WorkCompletion[16];
        long deadline = System.nanoTime() + STEP.toNanos();
        while (!receives.isEmpty() && System.nanoTime() < deadline) {
            int n = serverCq.poll(wcs);
            for (int k = 0; k < n; k++) {
                assertEquals(WcStatus.WR_FLUSH_ERR, wcs[k].status());
                assertTrue(receives.remove(wcs[k].wrId()), "completed once: " + wcs[k]);
            }
        }
        assertEquals(Set.of(), receives, "every outstanding receive completes in error");
        RawLink.eventually("the link is gone", STEP, () -> links(server) == 0);
    }

    @Test
    void aPeerThatStopsReadingEndsItsLinkNotTheMemory() throws Exception {
        SocketChannel raw = RawLink.open(listener.localAddress().getPort(), RawLink.secret(server), 4096);
        ByteBuffer frames = ByteBuffer.allocate(4096);
        int connections = 8;
        for (int number = 1; number <= connections; number++) {
            CmMessage req = new CmMessage(CmMessage.Type.REQ, 100 + number, 0, fabricGid(), 1, 0, 16, 16, 7, 7, new byte[0],
                    new InetSocketAddress("127.0.0.1", 40000 + number), listener.localAddress());
            new LinkFrame(new LinkConnection(null, number, null), null, req).encode(frames, true);
        }
        raw.socket().getOutputStream().write(frames.array(), 0, frames.position());
        CompletionQueue large = server.devices().get(0).createCompletionQueue(1 << 20, null);
        int depth = 16384;
        List<CmId> agents = new ArrayList<>();
        for (int i = 0; i < connections; i++) {
            CmEvent.ConnectRequest request = assertInstanceOf(CmEvent.ConnectRequest.class, serverEvents.await(STEP));
            CmId agent = serverEvents.cmId(request.id());
            agent.createQueuePair(serverPd, QpInitAttributes.rc(large, depth, 1));
            agent.accept(ConnectionParameters.of(null));
            agents.add(agent);
        }
        // the peer reads nothing: the socket fills, then the outbox, with writes and their retransmissions
        // (writes: they take no receive, so no ACK's credits hold them back as they would Sends)
        assertTrue(connections * depth >= TcpLink.MAX_OUTBOX / 2, "enough, with retransmissions, to overflow it");
        for (int s = 0; s < depth; s++) {
            for (CmId agent : agents) {
                agent.queuePair().postSend(SendWorkRequest.write(s, 0, 1, serverMemory.sge(0, SLOT)));
            }
        }
        Set<Long> disconnected = new HashSet<>();
        for (int i = 0; i < connections; i++) {
            disconnected.add(assertInstanceOf(CmEvent.Disconnected.class, serverEvents.await(STEP)).id());
        }
        assertEquals(agents.stream().map(CmId::handle).collect(Collectors.toSet()), disconnected,
                "a link whose outbox overflows ends, and every connection on it");
        RawLink.eventually("the link is gone", STEP, () -> links(server) == 0);
        raw.close();
    }

    /** Port 1 of soft0: the IPv4-mapped GID of 127.0.0.1. */
    private byte[] fabricGid() {
        return server.devices().get(0).queryPort(1).gid(0);
    }

    @Test
    void garbageOnALinkEndsThatLinkOnly() throws Exception {
        Client before = new Client();
        List<CmId[]> established = List.<CmId[]>of(before.connect());
        List<String> serverThreads = RawLink.threadsOf(server);
        int port = listener.localAddress().getPort();

        ByteBuffer oversized = ByteBuffer.allocate(4).putInt(Integer.MAX_VALUE);
        ByteBuffer unknownTag = ByteBuffer.allocate(4 + 5).putInt(5).put((byte) 9).putInt(1);
        // a REQ announcing 60000 bytes of private data, then two empty addresses
        ByteBuffer hugePrivateData = ByteBuffer.allocate(4 + 5 + 45).putInt(5 + 45).put(LinkFrame.CM).putInt(1)
                .put((byte) CmMessage.Type.REQ.ordinal()).putInt(1).putLong(0).put(new byte[16]).putInt(1).putInt(0)
                .put(new byte[] {16, 16, 7, 7}).putShort((short) 60000).put((byte) 0).put((byte) 0);
        // a request packet announcing a 1 MiB payload in a frame that ends after its header
        ByteBuffer payloadPastTheFrame = ByteBuffer.allocate(4 + 5 + 63).putInt(5 + 63).put(LinkFrame.PACKET)
                .putInt(1).put(new byte[59]).putInt(1 << 20);
        for (ByteBuffer garbage : List.of(oversized, unknownTag, hugePrivateData, payloadPastTheFrame)) {
            try (SocketChannel raw = RawLink.open(port, RawLink.secret(server), 0)) {
                raw.socket().getOutputStream().write(garbage.array());
                RawLink.assertEndedByTheServer(raw.socket().getInputStream(),
                        "the server ends a link that sends garbage");
            }
        }
        // a frame cut short by the end of its socket
        try (SocketChannel raw = RawLink.open(port, RawLink.secret(server), 0)) {
            DataOutputStream out = new DataOutputStream(raw.socket().getOutputStream());
            out.writeInt(100);
            out.write(new byte[10]);
        }
        RawLink.eventually("every garbage link ended", STEP, () -> links(server) == 1);

        exchange(before, established, List.of(0));
        Client after = new Client();
        List<CmId[]> fresh = List.<CmId[]>of(after.connect());
        exchange(after, fresh, List.of(0));
        assertEquals(serverThreads, RawLink.threadsOf(server), "the I/O thread outlived every bad link");
        assertNull(serverEvents.await(Duration.ofMillis(100)), "no connection of the server ended");
    }

}
