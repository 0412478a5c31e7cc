package io.rdmaactors.jna;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaactors.cm.CmEvent;
import io.rdmaactors.verbs.Access;
import io.rdmaactors.verbs.CmId;
import io.rdmaactors.verbs.CompletionQueue;
import io.rdmaactors.verbs.ConnectionParameters;
import io.rdmaactors.verbs.Device;
import io.rdmaactors.verbs.EventChannel;
import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.PortAttributes;
import io.rdmaactors.verbs.PortSpace;
import io.rdmaactors.verbs.ProtectionDomain;
import io.rdmaactors.verbs.QpAttributes;
import io.rdmaactors.verbs.QpInitAttributes;
import io.rdmaactors.verbs.QueuePair;
import io.rdmaactors.verbs.ReceiveWorkRequest;
import io.rdmaactors.verbs.ResourceClosedException;
import io.rdmaactors.verbs.SendWorkRequest;
import io.rdmaactors.verbs.WcOpcode;
import io.rdmaactors.verbs.WorkCompletion;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The jna provider end to end on a real device (Soft-RoCE in the guest harness): an RC connection
 * through the CM to this host's own address, send/receive with private data and immediates, RDMA
 * write and read, an atomic, and teardown with nothing leaked. Skips without a device.
 */
class JnaLoopbackTest {

    private Fabric fabric;
    private Device device;

    @BeforeEach
    void open() {
        fabric = JnaFabrics.openOrSkip();
        device = fabric.devices().get(0);
    }

    @AfterEach
    void close() {
        if (fabric != null) {
            fabric.close();
        }
    }

    @Test
    void portHasGidsAndActiveState() {
        PortAttributes port = device.queryPort(1);
        assertFalse(port.gids().isEmpty());
        assertTrue(device.query().physicalPortCount() >= 1);
    }

    @Test
    void rcConnectionCarriesSendWriteReadAndAtomics() throws Exception {
        InetAddress self = localAddress();
        try (EventChannel ch = fabric.createEventChannel()) {
            CmId listener = fabric.createCmId(ch, PortSpace.TCP);
            listener.bind(new InetSocketAddress(self, 0));
            listener.listen(4);
            int port = listener.localAddress().getPort();

            CmId client = fabric.createCmId(ch, PortSpace.TCP);
            client.resolveAddress(null, new InetSocketAddress(self, port), Duration.ofSeconds(2));
            assertInstanceOf(CmEvent.AddrResolved.class, next(ch));
            client.resolveRoute(Duration.ofSeconds(2));
            assertInstanceOf(CmEvent.RouteResolved.class, next(ch));
            Device dev = client.device();
            ProtectionDomain pd = dev.allocateProtectionDomain();
            CompletionQueue cq = dev.createCompletionQueue(64, null);
            QueuePair cqp = client.createQueuePair(pd, QpInitAttributes.rc(cq, 16, 16));
            ByteBuffer cbuf = ByteBuffer.allocateDirect(4096).order(ByteOrder.LITTLE_ENDIAN);
            MemoryRegion cmr = pd.register(cbuf, EnumSet.allOf(Access.class));
            cqp.postReceive(ReceiveWorkRequest.of(1, cmr.sge(0, 256)));
            client.connect(ConnectionParameters.of("hello".getBytes(StandardCharsets.US_ASCII)));

            CmEvent.ConnectRequest req = assertInstanceOf(CmEvent.ConnectRequest.class, next(ch));
            assertEquals(listener.handle(), req.listenId());
            assertArrayEquals("hello".getBytes(StandardCharsets.US_ASCII), java.util.Arrays.copyOf(req.privateData(), 5));
            System.out.println("connect private data arrives as " + req.privateData().length + " bytes");
            CmId server = ch.cmId(req.id());
            assertNotNull(server);
            QueuePair sqp = server.createQueuePair(pd, QpInitAttributes.rc(cq, 16, 16));
            ByteBuffer sbuf = ByteBuffer.allocateDirect(4096).order(ByteOrder.LITTLE_ENDIAN);
            MemoryRegion smr = pd.register(sbuf, EnumSet.allOf(Access.class));
            sqp.postReceive(ReceiveWorkRequest.of(2, smr.sge(0, 256)), ReceiveWorkRequest.of(3, smr.sge(256, 256)));
            server.accept(ConnectionParameters.of("welcome".getBytes(StandardCharsets.US_ASCII)));
            int established = 0;
            while (established < 2) {
                CmEvent e = next(ch);
                if (e instanceof CmEvent.Established) {
                    established++;
                }
            }

            cbuf.put(0, "ping".getBytes(StandardCharsets.US_ASCII));
            cqp.postSend(SendWorkRequest.send(10, cmr.sge(0, 4)));
            WorkCompletion[] wc = new WorkCompletion[8];
            assertEquals(WcOpcode.RECV, completion(cq, wc, 2).opcode());
            assertEquals("ping", StandardCharsets.US_ASCII.decode(smr.buffer().limit(4)).toString());

            cbuf.put(512, "written".getBytes(StandardCharsets.US_ASCII));
            cqp.postSend(SendWorkRequest.writeWithImmediate(11, 77, smr.address(1024), smr.rkey(), cmr.sge(512, 7)));
            WorkCompletion imm = completion(cq, wc, 3);
            assertEquals(WcOpcode.RECV_RDMA_WITH_IMM, imm.opcode());
            assertEquals(77, imm.immData());
            assertEquals("written", StandardCharsets.US_ASCII.decode(smr.buffer().position(1024).limit(1031)).toString());

            sbuf.putLong(2048, 40);
            cqp.postSend(SendWorkRequest.read(12, smr.address(1024), smr.rkey(), cmr.sge(2048, 7)));
            completion(cq, wc, 12);
            assertEquals("written", StandardCharsets.US_ASCII.decode(cmr.buffer().position(2048).limit(2055)).toString());
            cqp.postSend(SendWorkRequest.fetchAdd(13, smr.address(2048), smr.rkey(), 2, cmr.sge(3000, 8)));
            completion(cq, wc, 13);
            assertEquals(40, cbuf.getLong(3000));
            assertEquals(42, sbuf.getLong(2048));

            client.disconnect();
            server.close();
            client.close();
            listener.close();
            cmr.close();
            smr.close();
            cq.close();
            cq.close();
            assertThrows(ResourceClosedException.class, () -> cq.poll(wc));
            pd.close();
        }
        assertEquals(0, fabric.ledger().total(), fabric.ledger().toString());
    }

    /**
     * What rdma_cm gives each QP, seen on a real stack: the passive QP the REQ's retry counts and
     * the resources it accepts with, the active QP the REP's rnr_retry_count and resources crossed
     * and its own retry count. The soft CM models the same (CmConformance, whose CM tests rxe skips).
     */
    @Test
    void theCmGivesEachQpThePeersRetryCountsAndResources() throws Exception {
        InetAddress self = localAddress();
        try (EventChannel ch = fabric.createEventChannel()) {
            CmId listener = fabric.createCmId(ch, PortSpace.TCP);
            listener.bind(new InetSocketAddress(self, 0));
            listener.listen(4);
            CmId client = fabric.createCmId(ch, PortSpace.TCP);
            client.resolveAddress(null, listener.localAddress(), Duration.ofSeconds(2));
            assertInstanceOf(CmEvent.AddrResolved.class, next(ch));
            client.resolveRoute(Duration.ofSeconds(2));
            assertInstanceOf(CmEvent.RouteResolved.class, next(ch));
            ProtectionDomain pd = client.device().allocateProtectionDomain();
            CompletionQueue cq = client.device().createCompletionQueue(16, null);
            QueuePair active = client.createQueuePair(pd, QpInitAttributes.rc(cq, 4, 4));
            client.connect(new ConnectionParameters(null, 4, 3, 3, 2));
            CmId server = ch.cmId(assertInstanceOf(CmEvent.ConnectRequest.class, next(ch)).id());
            QueuePair passive = server.createQueuePair(pd, QpInitAttributes.rc(cq, 4, 4));
            server.accept(new ConnectionParameters(null, 1, 2, 7, 5));
            assertInstanceOf(CmEvent.Established.class, next(ch));
            assertInstanceOf(CmEvent.Established.class, next(ch));

            QpAttributes p = passive.query();
            assertEquals(List.of(3, 2, 1, 2), List.of(p.retryCount(), p.rnrRetry(), p.maxDestRdAtomic(),
                    p.maxRdAtomic()), "passive retry_cnt, rnr_retry, max_dest_rd_atomic, max_rd_atomic");
            QpAttributes a = active.query();
            assertEquals(List.of(3, 5, 2, 1), List.of(a.retryCount(), a.rnrRetry(), a.maxDestRdAtomic(),
                    a.maxRdAtomic()), "active retry_cnt, rnr_retry, max_dest_rd_atomic, max_rd_atomic");

            client.disconnect();
            server.close();
            client.close();
            listener.close();
            cq.close();
            pd.close();
        }
        assertEquals(0, fabric.ledger().total(), fabric.ledger().toString());
    }

    /** The Soft-RoCE address in the guest harness; any non-loopback IPv4 address elsewhere. */
    private static InetAddress localAddress() throws Exception {
        for (var nif : java.util.Collections.list(java.net.NetworkInterface.getNetworkInterfaces())) {
            for (var a : java.util.Collections.list(nif.getInetAddresses())) {
                if (a instanceof java.net.Inet4Address && !a.isLoopbackAddress()) {
                    return a;
                }
            }
        }
        throw new IllegalStateException("no IPv4 address");
    }

    private static CmEvent next(EventChannel ch) throws Exception {
        CmEvent e = null;
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (e == null && System.nanoTime() < deadline) {
            e = ch.await(Duration.ofMillis(500));
        }
        assertNotNull(e, "no CM event in 10 s");
        return e;
    }

    private static WorkCompletion completion(CompletionQueue cq, WorkCompletion[] wc, long wrId) {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (System.nanoTime() < deadline) {
            int n = cq.poll(wc);
            for (int i = 0; i < n; i++) {
                assertTrue(wc[i].isSuccess(), wc[i].toString());
                if (wc[i].wrId() == wrId) {
                    return wc[i];
                }
            }
        }
        throw new AssertionError("no completion for " + wrId);
    }
}
