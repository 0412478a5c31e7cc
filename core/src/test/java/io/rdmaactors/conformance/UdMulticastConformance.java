package io.rdmaactors.conformance;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaactors.cm.AddressVector;
import io.rdmaactors.cm.CmEvent;
import io.rdmaactors.cm.UdParameters;
import io.rdmaactors.verbs.AddressHandle;
import io.rdmaactors.verbs.CmId;
import io.rdmaactors.verbs.CompletionQueue;
import io.rdmaactors.verbs.EventChannel;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.PortSpace;
import io.rdmaactors.verbs.ProtectionDomain;
import io.rdmaactors.verbs.QpAttributes;
import io.rdmaactors.verbs.QpInitAttributes;
import io.rdmaactors.verbs.QpState;
import io.rdmaactors.verbs.QueuePair;
import io.rdmaactors.verbs.ReceiveWorkRequest;
import io.rdmaactors.verbs.SendWorkRequest;
import io.rdmaactors.verbs.WcStatus;
import io.rdmaactors.verbs.WorkCompletion;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Unreliable datagrams: the 40-byte GRH in front of every receive, and multicast through the CM. */
public abstract class UdMulticastConformance extends FabricConformance {

    private static final int GRH = 40;
    private static final int QKEY = 0x1111_2222;
    private static final int MULTICAST_QPN = 0xFFFFFF;

    private QueuePair udQueuePair(ProtectionDomain pd, CompletionQueue cq) {
        return udQueuePair(pd, cq, QKEY);
    }

    private QueuePair udQueuePair(ProtectionDomain pd, CompletionQueue cq, int qkey) {
        QueuePair qp = opened(pd.createQueuePair(QpInitAttributes.ud(cq, 8, 8)));
        qp.modify(QpAttributes.of().state(QpState.INIT).portNum(Loopback.PORT).pkeyIndex(0).qkey(qkey));
        qp.modify(QpAttributes.of().state(QpState.RTR));
        qp.modify(QpAttributes.of().state(QpState.RTS).sqPsn(0));
        return qp;
    }

    /** An address handle to this device's own port: where every datagram of these tests goes. */
    private AddressHandle loopbackAddress(ProtectionDomain pd) {
        return opened(pd.createAddressHandle(
                AddressVector.global(device().queryPort(Loopback.PORT).gid(0), Loopback.PORT)));
    }

    /** What one datagram left behind: both completions, the sender's QP number and the receive buffer. */
    private record Datagram(WorkCompletion recv, WorkCompletion send, int senderQpNum, MemoryRegion inbox) {
    }

    /** A datagram of {@code payload} bytes from one UD QP to another into a receive of {@code room} bytes. */
    private Datagram datagram(int payload, int room) {
        ProtectionDomain pd = opened(device().allocateProtectionDomain());
        CompletionQueue cq = opened(device().createCompletionQueue(16, null));
        QueuePair sender = udQueuePair(pd, cq);
        QueuePair receiver = udQueuePair(pd, cq);
        AddressHandle ah = loopbackAddress(pd);
        MemoryRegion src = opened(pd.register(pattern(payload, 1)));
        MemoryRegion inbox = opened(pd.register(ByteBuffer.allocateDirect(room)));
        receiver.postReceive(ReceiveWorkRequest.of(1, inbox.sge()));
        sender.postSend(SendWorkRequest.send(2, src.sge()).to(ah, receiver.qpNum(), QKEY));
        WorkCompletion first = poll(cq);
        WorkCompletion second = poll(cq);
        WorkCompletion recv = first.wrId() == 1 ? first : second;
        WorkCompletion send = first.wrId() == 1 ? second : first;
        assertEquals(receiver.qpNum(), recv.qpNum());
        assertEquals(sender.qpNum(), send.qpNum());
        return new Datagram(recv, send, sender.qpNum(), inbox);
    }

    @Test
    void datagramArrivesBehindAGrh() {
        Datagram d = datagram(32, GRH + 64);
        assertEquals(WcStatus.SUCCESS, d.recv().status(), d.recv().toString());
        assertEquals(GRH + 32, d.recv().byteLen());
        assertEquals(d.senderQpNum(), d.recv().srcQp());
        assertTrue(d.recv().hasGrh(), "GRH flag");
        assertArrayEquals(patternBytes(32, 1), bytes(d.inbox().buffer(), GRH, 32));
        assertEquals(WcStatus.SUCCESS, d.send().status());
    }

    @Test
    void datagramLargerThanTheReceiveIsALocalLengthError() {
        assertEquals(WcStatus.LOC_LEN_ERR, datagram(32, GRH + 16).recv().status());
    }

    @Test
    void datagramWithAnotherQkeyIsDropped() {
        ProtectionDomain pd = opened(device().allocateProtectionDomain());
        CompletionQueue cq = opened(device().createCompletionQueue(16, null));
        QueuePair sender = udQueuePair(pd, cq);
        QueuePair receiver = udQueuePair(pd, cq);
        AddressHandle ah = loopbackAddress(pd);
        MemoryRegion src = opened(pd.register(pattern(16, 2)));
        MemoryRegion inbox = opened(pd.register(ByteBuffer.allocateDirect(GRH + 16)));
        receiver.postReceive(ReceiveWorkRequest.of(1, inbox.sge()));
        sender.postSend(SendWorkRequest.send(2, src.sge()).to(ah, receiver.qpNum(), QKEY + 1));
        // UD is unreliable: the send completes whether or not the datagram was taken
        pollSuccess(cq, 2);
        assertNoCompletion(cq);
        sender.postSend(SendWorkRequest.send(3, src.sge()).to(ah, receiver.qpNum(), QKEY));
        List<WorkCompletion> done = poll(cq, 2);
        done.forEach(wc -> assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString()));
        assertEquals(List.of(1L, 3L), done.stream().map(WorkCompletion::wrId).sorted().toList(),
                "the receive waited for a datagram with its Q_Key");
    }

    @Test
    void datagramToAnRcQpIsDropped() throws Exception {
        try (Loopback loop = loopback().open()) {
            ProtectionDomain pd = opened(device().allocateProtectionDomain());
            CompletionQueue cq = opened(device().createCompletionQueue(16, null));
            // an RC QP's Q_Key is 0: a datagram with Q_Key 0 passes every check but the QP type's
            QueuePair sender = udQueuePair(pd, cq, 0);
            AddressHandle ah = loopbackAddress(pd);
            MemoryRegion datagram = opened(pd.register(pattern(16, 3)));
            MemoryRegion inbox = loop.b.register(GRH + 16);
            loop.b.qp.postReceive(ReceiveWorkRequest.of(1, inbox.sge()));
            sender.postSend(SendWorkRequest.send(2, datagram.sge()).to(ah, loop.b.qp.qpNum(), 0));
            pollSuccess(cq, 2);
            assertNoCompletion(loop.b.cq);
            assertEquals(QpState.RTS, loop.b.qp.state());
            // the receive is still there for the RC peer's message
            MemoryRegion message = loop.a.register(pattern(16, 4));
            loop.a.qp.postSend(SendWorkRequest.send(3, message.sge()));
            assertEquals(16, pollSuccess(loop.b.cq, 1).byteLen());
            pollSuccess(loop.a.cq, 3);
            assertArrayEquals(patternBytes(16, 4), bytes(inbox.buffer(), 0, 16));
        }
    }

    /** A UDP port space id that resolved the group, with a UD QP and receives posted. */
    private final class Member {
        final EventChannel events = opened(fabric.createEventChannel());
        final CmId id = opened(fabric.createCmId(events, PortSpace.UDP));
        ProtectionDomain pd;
        CompletionQueue cq;
        QueuePair qp;
        MemoryRegion buffers;
        UdParameters group;

        Member(InetSocketAddress address, int receives, int slot) throws Exception {
            id.resolveAddress(null, address, STEP);
            await(events, CmEvent.AddrResolved.class);
            pd = opened(id.device().allocateProtectionDomain());
            cq = opened(id.device().createCompletionQueue(16, null));
            qp = opened(id.createQueuePair(pd, QpInitAttributes.ud(cq, 8, 8)));
            buffers = opened(pd.register(ByteBuffer.allocateDirect(Math.max(1, receives) * slot)));
            for (int i = 0; i < receives; i++) {
                qp.postReceive(ReceiveWorkRequest.of(i, buffers.sge(i * slot, slot)));
            }
            id.joinMulticast(address);
            opened(() -> id.leaveMulticast(address));
            CmEvent.MulticastJoin join = await(events, CmEvent.MulticastJoin.class);
            assertEquals(id.handle(), join.id());
            group = join.ud();
        }
    }

    @Test
    void multicastReachesEveryMember() throws Exception {
        InetSocketAddress address = new InetSocketAddress("239.0.0.7", 0);
        int payload = 24;
        List<Member> receivers = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            receivers.add(new Member(address, 1, GRH + payload));
        }
        Member sender = new Member(address, 0, GRH + payload);
        assertEquals(MULTICAST_QPN, sender.group.qpNum(), "the multicast QPN");
        AddressHandle ah = opened(sender.pd.createAddressHandle(sender.group.addressVector()));
        MemoryRegion src = opened(sender.pd.register(pattern(payload, 9)));
        sender.qp.postSend(SendWorkRequest.send(1, src.sge()).to(ah, sender.group.qpNum(), sender.group.qkey()));
        pollSuccess(sender.cq, 1);
        for (Member r : receivers) {
            assertEquals(sender.group.qkey(), r.group.qkey(), "one group, one Q_Key");
            WorkCompletion wc = pollSuccess(r.cq, 0);
            assertEquals(GRH + payload, wc.byteLen());
            assertEquals(sender.qp.qpNum(), wc.srcQp());
            assertEquals(r.qp.qpNum(), wc.qpNum());
            assertArrayEquals(patternBytes(payload, 9), bytes(r.buffers.buffer(), GRH, payload));
            assertNoCompletion(r.cq);
        }
    }
}
