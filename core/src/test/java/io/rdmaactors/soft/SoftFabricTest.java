package io.rdmaactors.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaactors.cm.CmEvent;
import io.rdmaactors.conformance.Loopback;
import io.rdmaactors.verbs.Access;
import io.rdmaactors.verbs.CmId;
import io.rdmaactors.verbs.CompletionQueue;
import io.rdmaactors.verbs.ConnectionParameters;
import io.rdmaactors.verbs.EventChannel;
import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.FabricUnavailableException;
import io.rdmaactors.verbs.InvalidRequestException;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.PortSpace;
import io.rdmaactors.verbs.ProtectionDomain;
import io.rdmaactors.verbs.QpInitAttributes;
import io.rdmaactors.verbs.ReceiveWorkRequest;
import io.rdmaactors.verbs.ResourceClosedException;
import io.rdmaactors.verbs.SendWorkRequest;
import io.rdmaactors.verbs.WorkCompletion;
import java.lang.ref.WeakReference;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** What is particular to the soft provider: its topology, threads and lifetime. */
class SoftFabricTest {

    private static final Duration STEP = Duration.ofSeconds(5);

    /** A peer may touch only memory it was told of: keys and addresses follow no sequence it could guess. */
    @Test
    void memoryKeysAndAddressesAreNotASequence() {
        try (Fabric fabric = Fabric.open("soft"); ProtectionDomain pd = fabric.devices().get(0)
                .allocateProtectionDomain()) {
            List<MemoryRegion> regions = new ArrayList<>();
            for (int i = 0; i < 64; i++) {
                regions.add(pd.register(ByteBuffer.allocateDirect(100), Set.of(Access.REMOTE_READ)));
            }
            Set<Integer> keys = new HashSet<>();
            Set<Long> steps = new HashSet<>();
            Set<Long> gaps = new HashSet<>();
            for (int i = 0; i < regions.size(); i++) {
                MemoryRegion r = regions.get(i);
                assertTrue(r.rkey() != 0 && keys.add(r.rkey()), "a fresh key");
                assertEquals(0, r.address() % 4096, "page aligned");
                if (i > 0) {
                    MemoryRegion before = regions.get(i - 1);
                    steps.add((long) r.rkey() - before.rkey());
                    gaps.add(r.address() - before.address());
                    assertTrue(r.address() >= before.address() + 4096 + 4096, "a guard page between regions");
                }
            }
            assertTrue(steps.size() > 1, "rkeys are not a sequence: " + steps);
            assertTrue(gaps.size() > 1, "addresses are not a sequence: " + gaps);
            regions.forEach(MemoryRegion::close);
        }
    }

    /**
     * Regions registered one after the other differ in the key bits that index their PD's lookup,
     * so that a gather alternating between them (a shared PD's send slots) does not miss on each.
     */
    @Test
    void regionsRegisteredInTurnTakeDifferentLookupEntries() {
        try (Fabric fabric = Fabric.open("soft"); ProtectionDomain pd = fabric.devices().get(0)
                .allocateProtectionDomain()) {
            List<MemoryRegion> regions = new ArrayList<>();
            Set<Integer> entries = new HashSet<>();
            for (int i = 0; i <= SoftProtectionDomain.RECENT_MASK; i++) {
                MemoryRegion r = pd.register(ByteBuffer.allocateDirect(100), Set.of(Access.LOCAL_WRITE));
                regions.add(r);
                assertTrue(entries.add(r.lkey() & SoftProtectionDomain.RECENT_MASK), "entry taken twice: " + entries);
            }
            regions.forEach(MemoryRegion::close);
        }
    }

    @Test
    void devicesAndPortsFollowTheDocumentedAddressing() {
        try (Fabric fabric = Fabric.open("soft", Map.of("devices", "2"))) {
            assertEquals(List.of("soft0", "soft1"), fabric.devices().stream().map(d -> d.name()).toList());
            byte[] gid = fabric.device("soft1").queryPort(2).gid(0);
            assertEquals(127, gid[12]);
            assertEquals(1, gid[14], "device index");
            assertEquals(2, gid[15], "port number");
        }
    }

    @Test
    void ephemeralPortsGoRoundTheRangeAndNeverRunOut() {
        // more than the range holds: a long-running client keeps connecting
        int span = SoftCmId.EPHEMERAL_LAST - SoftCmId.EPHEMERAL_FIRST + 1;
        int previous = SoftCmId.ephemeralPort();
        for (int i = 0; i < 2 * span; i++) {
            int port = SoftCmId.ephemeralPort();
            assertEquals(previous == SoftCmId.EPHEMERAL_LAST ? SoftCmId.EPHEMERAL_FIRST : previous + 1, port,
                    "the range's next port, wrapping round");
            previous = port;
        }
        try (Fabric fabric = Fabric.open("soft")) {
            EventChannel events = fabric.createEventChannel();
            CmId id = fabric.createCmId(events, PortSpace.TCP);
            id.resolveAddress(null, new InetSocketAddress("127.0.0.1", 7471), Duration.ofSeconds(1));
            int port = id.localAddress().getPort();
            assertTrue(port >= SoftCmId.EPHEMERAL_FIRST && port <= SoftCmId.EPHEMERAL_LAST, "an id's port: " + port);
            id.close();
            events.close();
        }
    }

    /** With its only device removed, a resolve answers ADDR_ERROR -ENODEV, as rdma_cm without an RDMA device. */
    @Test
    void resolvingWithEveryDeviceRemovedIsAnAddressErrorNoDevice() throws Exception {
        try (Fabric fabric = Fabric.open("soft"); EventChannel events = fabric.createEventChannel();
             CmId id = fabric.createCmId(events, PortSpace.TCP)) {
            fabric.faults().orElseThrow().removeDevice(fabric.devices().get(0));
            id.resolveAddress(null, new InetSocketAddress("127.0.0.1", 7471), STEP);
            CmEvent.AddrError error = assertInstanceOf(CmEvent.AddrError.class, events.await(STEP));
            assertEquals(-io.rdmaactors.verbs.VerbsException.ENODEV, error.status());
        }
    }

    @Test
    void unknownProviderIsATypedError() {
        assertThrows(FabricUnavailableException.class, () -> Fabric.open("no-such-provider"));
        assertThrows(InvalidRequestException.class, () -> Fabric.open("soft", Map.of("devices", "0")));
    }

    /** The ffm provider is its own module, for Java 22+: without it the error says what it needs. */
    @Test
    void theFfmProviderAbsentIsOneClearError() {
        FabricUnavailableException e = assertThrows(FabricUnavailableException.class, () -> Fabric.open("ffm"));
        String expected = Runtime.version().feature() < 22 ? "needs Java 22 or newer" : "no fabric provider named 'ffm'";
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }

    @Test
    void closingTheFabricClosesEverythingAndStopsItsThreads() throws Exception {
        Fabric fabric = Fabric.open("soft");
        EventChannel events = fabric.createEventChannel();
        CmId listener = fabric.createCmId(events, PortSpace.TCP);
        listener.bind(new InetSocketAddress("127.0.0.1", 0));
        listener.listen(4);
        ProtectionDomain pd = fabric.devices().get(0).allocateProtectionDomain();
        pd.register(ByteBuffer.allocateDirect(64));
        assertTrue(fabric.ledger().total() > 0);
        fabric.close();
        assertEquals(0, fabric.ledger().total(), fabric.ledger().toString());
        assertThrows(ResourceClosedException.class, () -> pd.register(ByteBuffer.allocateDirect(64)));
        assertThrows(ResourceClosedException.class, fabric::createEventChannel);
        long deadline = System.nanoTime() + STEP.toNanos();
        while (!RawLink.threadsOf(fabric).isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertEquals(List.of(), RawLink.threadsOf(fabric), "threads outlived the fabric");
    }

    @Test
    void twoFabricsInOneProcessConnectThroughTheCm() throws Exception {
        try (Fabric server = Fabric.open("soft"); Fabric client = Fabric.open("soft")) {
            EventChannel serverEvents = server.createEventChannel();
            CmId listener = server.createCmId(serverEvents, PortSpace.TCP);
            listener.bind(new InetSocketAddress("127.0.0.1", 0));
            listener.listen(1);
            EventChannel clientEvents = client.createEventChannel();
            CmId id = client.createCmId(clientEvents, PortSpace.TCP);
            id.resolveAddress(null, listener.localAddress(), STEP);
            assertInstanceOf(CmEvent.AddrResolved.class, clientEvents.await(STEP));
            id.resolveRoute(STEP);
            assertInstanceOf(CmEvent.RouteResolved.class, clientEvents.await(STEP));
            ProtectionDomain pd = id.device().allocateProtectionDomain();
            CompletionQueue cq = id.device().createCompletionQueue(8, null);
            id.createQueuePair(pd, QpInitAttributes.rc(cq, 4, 4));
            MemoryRegion mr = pd.register(ByteBuffer.allocateDirect(16).put(0, (byte) 42));
            id.connect(ConnectionParameters.of(null));

            CmEvent.ConnectRequest request = assertInstanceOf(CmEvent.ConnectRequest.class, serverEvents.await(STEP));
            CmId agent = serverEvents.cmId(request.id());
            ProtectionDomain serverPd = agent.device().allocateProtectionDomain();
            CompletionQueue serverCq = agent.device().createCompletionQueue(8, null);
            agent.createQueuePair(serverPd, QpInitAttributes.rc(serverCq, 4, 4));
            MemoryRegion inbox = serverPd.register(ByteBuffer.allocateDirect(16));
            agent.queuePair().postReceive(ReceiveWorkRequest.of(1, inbox.sge()));
            agent.accept(ConnectionParameters.of(null));
            assertInstanceOf(CmEvent.Established.class, clientEvents.await(STEP));

            id.queuePair().postSend(SendWorkRequest.send(2, mr.sge()));
            WorkCompletion[] wc = new WorkCompletion[1];
            long deadline = System.nanoTime() + STEP.toNanos();
            while (serverCq.poll(wc) == 0 && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertTrue(wc[0].isSuccess(), String.valueOf(wc[0]));
            assertEquals(42, inbox.buffer().get(0));
        }
    }

    /**
     * A protection domain remembers the regions its last gather and scatter found, so the next
     * lookup of the same key is cheap; a region deregistered must not stay alive through that,
     * nor its memory.
     */
    @Test
    void aDeregisteredRegionIsNotKeptAliveByTheLookupsThatFoundIt() throws Exception {
        try (Fabric fabric = Fabric.open("soft");
             Loopback loop = Loopback.on(fabric.devices().get(0)).open()) {
            MemoryRegion inbox = loop.b.pd.register(ByteBuffer.allocateDirect(64));
            loop.b.qp.postReceive(ReceiveWorkRequest.of(1, inbox.sge()));
            MemoryRegion source = loop.a.pd.register(ByteBuffer.allocateDirect(64));
            loop.a.qp.postSend(SendWorkRequest.send(2, source.sge()));
            assertTrue(completion(loop.a.cq).isSuccess());
            assertTrue(completion(loop.b.cq).isSuccess());
            WeakReference<MemoryRegion> gathered = new WeakReference<>(source);
            WeakReference<MemoryRegion> scattered = new WeakReference<>(inbox);
            source.close();
            inbox.close();
            source = null;
            inbox = null;
            for (int i = 0; i < 50 && (gathered.get() != null || scattered.get() != null); i++) {
                System.gc();
                Thread.sleep(20);
            }
            assertNull(gathered.get(), "the region a send was gathered from is still held");
            assertNull(scattered.get(), "the region a receive was scattered into is still held");
        }
    }

    private static WorkCompletion completion(CompletionQueue cq) {
        WorkCompletion[] wc = new WorkCompletion[1];
        long deadline = System.nanoTime() + STEP.toNanos();
        while (cq.poll(wc) == 0) {
            assertTrue(System.nanoTime() < deadline, "no completion");
            Thread.onSpinWait();
        }
        return wc[0];
    }
}
