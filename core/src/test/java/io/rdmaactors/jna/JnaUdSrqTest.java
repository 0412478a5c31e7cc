package io.rdmaactors.jna;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaactors.cm.CmEvent;
import io.rdmaactors.cm.UdParameters;
import io.rdmaactors.verbs.AddressHandle;
import io.rdmaactors.verbs.CmId;
import io.rdmaactors.verbs.CompletionChannel;
import io.rdmaactors.verbs.CompletionQueue;
import io.rdmaactors.verbs.Device;
import io.rdmaactors.verbs.EventChannel;
import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.LinkLayer;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.MigrationState;
import io.rdmaactors.verbs.NotSupportedException;
import io.rdmaactors.verbs.PortSpace;
import io.rdmaactors.verbs.ProtectionDomain;
import io.rdmaactors.verbs.QpAttributes;
import io.rdmaactors.verbs.QpInitAttributes;
import io.rdmaactors.verbs.QueuePair;
import io.rdmaactors.verbs.ReceiveWorkRequest;
import io.rdmaactors.verbs.ResourceBusyException;
import io.rdmaactors.verbs.ResourceClosedException;
import io.rdmaactors.verbs.SendWorkRequest;
import io.rdmaactors.verbs.SharedReceiveQueue;
import io.rdmaactors.verbs.WorkCompletion;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** UD multicast through the CM, SRQ, completion channel, async events, APM refusal and misuse, on a real device. */
class JnaUdSrqTest {

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
            assertEquals(0, fabric.ledger().total(), fabric.ledger().toString());
        }
    }

    @Test
    void multicastSendReachesTheGroupWithGrh() throws Exception {
        InetAddress self = InetAddress.getByName("10.0.2.15");
        Assumptions.assumeTrue(java.net.NetworkInterface.getByInetAddress(self) != null, "not the Soft-RoCE guest");
        InetSocketAddress group = new InetSocketAddress(InetAddress.getByName("239.1.2.3"), 0);
        try (EventChannel ch = fabric.createEventChannel()) {
            CmId id = fabric.createCmId(ch, PortSpace.UDP);
            id.bind(new InetSocketAddress(self, 0));
            Device dev = id.device();
            ProtectionDomain pd = dev.allocateProtectionDomain();
            CompletionChannel cc = dev.createCompletionChannel();
            CompletionQueue cq = dev.createCompletionQueue(16, cc);
            QueuePair qp = id.createQueuePair(pd, QpInitAttributes.ud(cq, 8, 8));
            MemoryRegion mr = pd.register(ByteBuffer.allocateDirect(4096));
            qp.postReceive(ReceiveWorkRequest.of(1, mr.sge(0, 40 + 64)));
            id.joinMulticast(group);
            CmEvent e = ch.await(Duration.ofSeconds(10));
            CmEvent.MulticastJoin join = assertInstanceOf(CmEvent.MulticastJoin.class, e);
            UdParameters ud = join.ud();
            AddressHandle ah = pd.createAddressHandle(ud.addressVector());
            mr.buffer().put(1024, "to the group".getBytes(StandardCharsets.US_ASCII));
            cq.requestNotify(false);
            qp.postSend(SendWorkRequest.send(2, mr.sge(1024, 12)).to(ah, ud.qpNum(), ud.qkey()));
            assertTrue(cc.await(Duration.ofSeconds(10)) == cq, "the completion channel fired for the CQ");
            cq.ackEvents(1);
            WorkCompletion[] wc = new WorkCompletion[4];
            int got = 0;
            WorkCompletion recv = null;
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (recv == null && System.nanoTime() < deadline) {
                int n = cq.poll(wc);
                for (int i = 0; i < n; i++) {
                    assertTrue(wc[i].isSuccess(), wc[i].toString());
                    got++;
                    if (wc[i].wrId() == 1) {
                        recv = wc[i];
                    }
                }
            }
            assertNotNull(recv, "the group's message came back, " + got + " completions");
            assertTrue(recv.hasGrh());
            assertEquals(40 + 12, recv.byteLen());
            assertEquals("to the group", StandardCharsets.US_ASCII.decode(mr.buffer().position(40).limit(52)).toString());
            id.leaveMulticast(group);
            ah.close();
            id.close();
            cq.close();
            cc.close();
            mr.close();
            pd.close();
        }
    }

    @Test
    void srqRefusesDestroyWhileAttachedAndCountsPosted() {
        ProtectionDomain pd = device.allocateProtectionDomain();
        CompletionQueue cq = device.createCompletionQueue(16, null);
        SharedReceiveQueue srq = pd.createSharedReceiveQueue(16, 1);
        MemoryRegion mr = pd.register(ByteBuffer.allocateDirect(1024));
        srq.postReceive(ReceiveWorkRequest.of(1, mr.sge(0, 64)), ReceiveWorkRequest.of(2, mr.sge(64, 64)));
        assertEquals(2, srq.posted());
        srq.armLimit(1);
        QueuePair qp = pd.createQueuePair(QpInitAttributes.rc(cq, 4, 4).withSrq(srq));
        assertThrows(ResourceBusyException.class, srq::close);
        assertThrows(ResourceBusyException.class, cq::close);
        assertThrows(ResourceBusyException.class, pd::close);
        qp.close();
        qp.close();
        assertThrows(ResourceClosedException.class, qp::state);
        srq.close();
        mr.close();
        cq.close();
        pd.close();
        assertThrows(ResourceClosedException.class, () -> pd.register(ByteBuffer.allocateDirect(8)));
    }

    @Test
    void alternatePathOnRoceIsNotSupported() {
        Assumptions.assumeTrue(device.queryPort(1).linkLayer() == LinkLayer.ETHERNET, "not a RoCE port");
        ProtectionDomain pd = device.allocateProtectionDomain();
        CompletionQueue cq = device.createCompletionQueue(4, null);
        QueuePair qp = pd.createQueuePair(QpInitAttributes.rc(cq, 4, 4));
        var av = io.rdmaactors.cm.AddressVector.global(device.queryPort(1).gid(0), 1);
        assertThrows(NotSupportedException.class, () -> qp.modify(QpAttributes.of().alternatePath(av)
                .alternatePortNum(1).migrationState(MigrationState.REARM)));
        qp.close();
        cq.close();
        pd.close();
    }

    @Test
    void asyncEventsWakeUpAndTimeOut() throws Exception {
        var events = device.asyncEvents();
        assertNull(events.await(Duration.ofMillis(50)));
        events.wakeup();
        long t0 = System.nanoTime();
        assertNull(events.await(Duration.ofSeconds(5)));
        assertTrue(System.nanoTime() - t0 < 2_000_000_000L, "the wake-up ended the wait");
    }
}
