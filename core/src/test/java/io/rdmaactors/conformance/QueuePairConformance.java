package io.rdmaactors.conformance;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.rdmaactors.cm.AddressVector;
import io.rdmaactors.verbs.Access;
import io.rdmaactors.verbs.CompletionChannel;
import io.rdmaactors.verbs.CompletionQueue;
import io.rdmaactors.verbs.InvalidRequestException;
import io.rdmaactors.verbs.InvalidStateException;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.PostException;
import io.rdmaactors.verbs.ProtectionDomain;
import io.rdmaactors.verbs.QpAttributes;
import io.rdmaactors.verbs.QpInitAttributes;
import io.rdmaactors.verbs.QpState;
import io.rdmaactors.verbs.QueueFullException;
import io.rdmaactors.verbs.QueuePair;
import io.rdmaactors.verbs.ReceiveWorkRequest;
import io.rdmaactors.verbs.ResourceBusyException;
import io.rdmaactors.verbs.ResourceClosedException;
import io.rdmaactors.verbs.ResourceKind;
import io.rdmaactors.verbs.ScatterGatherElement;
import io.rdmaactors.verbs.SendWorkRequest;
import io.rdmaactors.verbs.WcStatus;
import io.rdmaactors.verbs.WorkCompletion;
import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The QP state machine, posting rules, memory registration rules and the close rules. */
public abstract class QueuePairConformance extends FabricConformance {

    private QpAttributes toRtr(QueuePair peer) {
        byte[] gid = device().queryPort(Loopback.PORT).gid(0);
        return QpAttributes.readyToReceive(AddressVector.global(gid, Loopback.PORT), peer.qpNum(), 0);
    }

    @Test
    void validTransitionsLeadFromResetToRtsAndBack() {
        try (ProtectionDomain pd = device().allocateProtectionDomain();
             CompletionQueue cq = device().createCompletionQueue(16, null);
             QueuePair qp = pd.createQueuePair(QpInitAttributes.rc(cq, 4, 4))) {
            assertEquals(QpState.RESET, qp.state());
            qp.modify(QpAttributes.init(Loopback.PORT, Set.of(Access.LOCAL_WRITE)));
            assertEquals(QpState.INIT, qp.state());
            qp.modify(QpAttributes.of().state(QpState.INIT).accessFlags(Loopback.QP_ACCESS));
            assertEquals(QpState.INIT, qp.query().state());
            qp.modify(toRtr(qp));
            assertEquals(QpState.RTR, qp.state());
            qp.modify(QpAttributes.readyToSend(0));
            assertEquals(QpState.RTS, qp.state());
            assertEquals(QpState.RTS, qp.query().state());
            qp.modify(QpAttributes.of().state(QpState.RTS));
            assertEquals(QpState.RTS, qp.state());
            qp.modify(QpAttributes.of().state(QpState.ERR));
            assertEquals(QpState.ERR, qp.state());
            qp.modify(QpAttributes.of().state(QpState.RESET));
            assertEquals(QpState.RESET, qp.state());
            qp.modify(QpAttributes.init(Loopback.PORT, Set.of(Access.LOCAL_WRITE)));
            assertEquals(QpState.INIT, qp.state(), "a reset QP is usable again");
        }
    }

    @Test
    void invalidTransitionsThrowAndLeaveTheState() {
        try (ProtectionDomain pd = device().allocateProtectionDomain();
             CompletionQueue cq = device().createCompletionQueue(16, null);
             QueuePair qp = pd.createQueuePair(QpInitAttributes.rc(cq, 4, 4))) {
            assertThrows(InvalidStateException.class, () -> qp.modify(toRtr(qp)));
            assertThrows(InvalidStateException.class, () -> qp.modify(QpAttributes.readyToSend(0)));
            assertEquals(QpState.RESET, qp.state());
            qp.modify(QpAttributes.init(Loopback.PORT, Set.of(Access.LOCAL_WRITE)));
            assertThrows(InvalidStateException.class, () -> qp.modify(QpAttributes.readyToSend(0)));
            assertEquals(QpState.INIT, qp.state());
            qp.modify(toRtr(qp));
            assertThrows(InvalidStateException.class, () -> qp.modify(QpAttributes.of().state(QpState.INIT)));
            assertEquals(QpState.RTR, qp.state());
            qp.modify(QpAttributes.readyToSend(0));
            assertThrows(InvalidStateException.class, () -> qp.modify(toRtr(qp)));
            assertThrows(InvalidStateException.class, () -> qp.modify(QpAttributes.of().state(QpState.INIT)));
            assertEquals(QpState.RTS, qp.state());
            qp.modify(QpAttributes.of().state(QpState.ERR));
            assertThrows(InvalidStateException.class, () -> qp.modify(QpAttributes.readyToSend(0)));
            assertEquals(QpState.ERR, qp.state());
        }
    }

    @Test
    void rtsToRtsRefusesWhatOnlyRtrTakes() {
        try (Loopback loop = loopback().open()) {
            QueuePair qp = loop.a.qp;
            QpAttributes before = qp.query();
            for (QpAttributes refused : List.of(
                    QpAttributes.of().state(QpState.RTS).destQpNum(before.destQpNum() + 1),
                    QpAttributes.of().state(QpState.RTS).pathMtu(256),
                    QpAttributes.of().state(QpState.RTS).rqPsn(before.rqPsn() + 1))) {
                assertThrows(InvalidStateException.class, () -> qp.modify(refused));
            }
            QpAttributes after = qp.query();
            assertEquals(QpState.RTS, after.state());
            assertEquals(before.destQpNum(), after.destQpNum());
            assertEquals(before.pathMtu(), after.pathMtu());
            // what RTS to RTS does take still goes through
            qp.modify(QpAttributes.of().state(QpState.RTS).minRnrTimer(1));
            assertEquals(1, qp.query().minRnrTimer());
        }
    }

    @Test
    void moreSgesThanTheQpTakesAreRefusedAtPost() {
        try (Loopback loop = loopback().open()) {
            int sendSges = loop.a.qp.initAttributes().maxSendSge();
            int recvSges = loop.a.qp.initAttributes().maxRecvSge();
            MemoryRegion src = loop.a.register(pattern(sendSges + 1, 4));
            MemoryRegion inbox = loop.b.register(recvSges + 1);
            assertRefused(InvalidRequestException.class, 0,
                    () -> loop.a.qp.postSend(SendWorkRequest.send(1, bytewise(src, sendSges + 1))));
            assertRefused(InvalidRequestException.class, 0,
                    () -> loop.b.qp.postReceive(ReceiveWorkRequest.of(2, bytewise(inbox, recvSges + 1))));
            assertNoCompletion(loop.a.cq);
            assertNoCompletion(loop.b.cq);
            // as many as the QP takes go through
            loop.b.qp.postReceive(ReceiveWorkRequest.of(3, bytewise(inbox, recvSges)));
            loop.a.qp.postSend(SendWorkRequest.send(4, bytewise(src, Math.min(sendSges, recvSges))));
            pollSuccess(loop.a.cq, 4);
            pollSuccess(loop.b.cq, 3);
        }
    }

    /** One SGE per byte of the region's first {@code count} bytes. */
    private static ScatterGatherElement[] bytewise(MemoryRegion mr, int count) {
        ScatterGatherElement[] sges = new ScatterGatherElement[count];
        for (int i = 0; i < count; i++) {
            sges[i] = mr.sge(i, 1);
        }
        return sges;
    }

    @Test
    void postsTheStateCannotTakeAreRefused() {
        try (ProtectionDomain pd = device().allocateProtectionDomain();
             CompletionQueue cq = device().createCompletionQueue(16, null);
             QueuePair qp = pd.createQueuePair(QpInitAttributes.rc(cq, 4, 4));
             MemoryRegion mr = pd.register(ByteBuffer.allocateDirect(64))) {
            assertRefused(InvalidStateException.class, 0, () -> qp.postSend(SendWorkRequest.send(1, mr.sge())));
            assertRefused(InvalidStateException.class, 0, () -> qp.postReceive(ReceiveWorkRequest.of(2, mr.sge())));
            qp.modify(QpAttributes.init(Loopback.PORT, Set.of(Access.LOCAL_WRITE)));
            assertRefused(InvalidStateException.class, 0, () -> qp.postSend(SendWorkRequest.send(3, mr.sge())));
            qp.modify(toRtr(qp));
            assertRefused(InvalidStateException.class, 0, () -> qp.postSend(SendWorkRequest.send(4, mr.sge())));
            assertNoCompletion(cq);
        }
    }

    @Test
    void receivesMayBePostedInInit() {
        try (ProtectionDomain pd = device().allocateProtectionDomain();
             CompletionQueue cq = device().createCompletionQueue(16, null);
             QueuePair qp = pd.createQueuePair(QpInitAttributes.rc(cq, 4, 4));
             MemoryRegion mr = pd.register(ByteBuffer.allocateDirect(64))) {
            qp.modify(QpAttributes.init(Loopback.PORT, Set.of(Access.LOCAL_WRITE)));
            assertDoesNotThrow(() -> qp.postReceive(ReceiveWorkRequest.of(5, mr.sge())));
            qp.modify(QpAttributes.of().state(QpState.ERR));
            WorkCompletion wc = poll(cq);
            assertEquals(5, wc.wrId());
            assertEquals(WcStatus.WR_FLUSH_ERR, wc.status());
        }
    }

    @Test
    void postInErrIsFlushedAtOnce() {
        try (Loopback loop = loopback().open()) {
            MemoryRegion mr = loop.a.register(64);
            loop.a.qp.modify(QpAttributes.of().state(QpState.ERR));
            loop.a.qp.postReceive(ReceiveWorkRequest.of(1, mr.sge()));
            loop.a.qp.postSend(SendWorkRequest.send(2, mr.sge()));
            List<WorkCompletion> flushed = poll(loop.a.cq, 2);
            assertEquals(Set.of(1L, 2L), flushed.stream().map(WorkCompletion::wrId).collect(Collectors.toSet()));
            for (WorkCompletion wc : flushed) {
                assertEquals(WcStatus.WR_FLUSH_ERR, wc.status(), wc.toString());
                assertEquals(loop.a.qp.qpNum(), wc.qpNum());
            }
            assertNoCompletion(loop.a.cq);
            assertNoCompletion(loop.b.cq);
        }
    }

    @Test
    void fullReceiveQueueRefusesWithFailedIndex() throws Exception {
        try (Loopback loop = loopback().depths(4, 4).open()) {
            int depth = loop.b.qp.initAttributes().maxRecvWr();
            MemoryRegion inbox = loop.b.register(8 * (depth + 2));
            ReceiveWorkRequest[] receives = new ReceiveWorkRequest[depth + 2];
            for (int i = 0; i < receives.length; i++) {
                receives[i] = ReceiveWorkRequest.of(i, inbox.sge(8 * i, 8));
            }
            PostException refused = assertThrows(PostException.class, () -> loop.b.qp.postReceive(receives));
            assertEquals(depth, refused.failedIndex(), "the receives before it stay posted");
            assertEquals(QueueFullException.class, refused.reason().getClass());
            assertRefused(QueueFullException.class, 0, () -> loop.b.qp.postReceive(receives[depth]));
        }
    }

    @Test
    void fullSendQueueRefusesWithFailedIndexUntilCompletionsArePolled() throws Exception {
        try (Loopback loop = loopback().depths(4, 4).open()) {
            int depth = loop.a.qp.initAttributes().maxSendWr();
            MemoryRegion src = loop.a.register(8);
            MemoryRegion dst = loop.b.register(8, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
            SendWorkRequest[] writes = new SendWorkRequest[depth + 2];
            for (int i = 0; i < writes.length; i++) {
                writes[i] = SendWorkRequest.write(i, dst.address(), dst.rkey(), src.sge());
            }
            PostException refused = assertThrows(PostException.class, () -> loop.a.qp.postSend(writes));
            assertEquals(depth, refused.failedIndex());
            assertEquals(QueueFullException.class, refused.reason().getClass());
            // completed but not yet polled: the slots are still taken
            Thread.sleep(QUIET.toMillis());
            assertRefused(QueueFullException.class, 0, () -> loop.a.qp.postSend(writes[0]));
            for (int i = 0; i < depth; i++) {
                pollSuccess(loop.a.cq, i);
            }
            assertNoCompletion(loop.a.cq);
            loop.a.qp.postSend(SendWorkRequest.write(99, dst.address(), dst.rkey(), src.sge()));
            pollSuccess(loop.a.cq, 99);
        }
    }

    @Test
    void unsignaledSendsHoldTheirSlotsUntilALaterSignaledCompletionIsPolled() throws Exception {
        try (Loopback loop = loopback().depths(4, 4).open()) {
            int depth = loop.a.qp.initAttributes().maxSendWr();
            MemoryRegion src = loop.a.register(8);
            MemoryRegion dst = loop.b.register(8, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
            for (int i = 0; i < depth - 1; i++) {
                loop.a.qp.postSend(SendWorkRequest.write(i, dst.address(), dst.rkey(), src.sge()).unsignaled());
            }
            loop.a.qp.postSend(SendWorkRequest.write(depth - 1, dst.address(), dst.rkey(), src.sge()));
            // every write is done on the wire, but none of the slots is free before a poll says so
            Thread.sleep(QUIET.toMillis());
            assertRefused(QueueFullException.class, 0,
                    () -> loop.a.qp.postSend(SendWorkRequest.write(98, dst.address(), dst.rkey(), src.sge())));
            pollSuccess(loop.a.cq, depth - 1);
            assertNoCompletion(loop.a.cq);
            SendWorkRequest[] again = new SendWorkRequest[depth];
            for (int i = 0; i < depth; i++) {
                again[i] = SendWorkRequest.write(100 + i, dst.address(), dst.rkey(), src.sge());
            }
            loop.a.qp.postSend(again);
            for (int i = 0; i < depth; i++) {
                pollSuccess(loop.a.cq, 100 + i);
            }
        }
    }

    @Test
    void registrationNeedsADirectBuffer() {
        try (ProtectionDomain pd = device().allocateProtectionDomain()) {
            assertThrows(InvalidRequestException.class, () -> pd.register(ByteBuffer.allocate(64)));
            assertEquals(0, fabric.ledger().live(ResourceKind.MEMORY_REGION));
        }
    }

    @Test
    void remoteWriteAndAtomicNeedLocalWrite() {
        try (ProtectionDomain pd = device().allocateProtectionDomain()) {
            ByteBuffer buffer = ByteBuffer.allocateDirect(64);
            assertThrows(InvalidRequestException.class, () -> pd.register(buffer, Set.of(Access.REMOTE_WRITE)));
            assertThrows(InvalidRequestException.class, () -> pd.register(buffer, Set.of(Access.REMOTE_ATOMIC)));
            assertEquals(0, fabric.ledger().live(ResourceKind.MEMORY_REGION));
            pd.register(buffer, Set.of(Access.REMOTE_READ)).close();
            pd.register(buffer, Set.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE)).close();
        }
    }

    @Test
    void registrationCoversPositionToLimitWithLeastPrivilegeByDefault() {
        ByteBuffer buffer = pattern(64, 3).position(8).limit(40);
        try (ProtectionDomain pd = device().allocateProtectionDomain(); MemoryRegion mr = pd.register(buffer)) {
            assertEquals(32, mr.length());
            assertEquals(EnumSet.of(Access.LOCAL_WRITE), EnumSet.copyOf(mr.access()));
            assertArrayEquals(bytes(pattern(64, 3), 8, 32), bytes(mr.buffer(), 0, 32));
        }
    }

    @Test
    void protectionDomainIsBusyWhileARegionOrQpLives() {
        ProtectionDomain pd = device().allocateProtectionDomain();
        try (CompletionQueue cq = device().createCompletionQueue(16, null)) {
            MemoryRegion mr = pd.register(ByteBuffer.allocateDirect(64));
            assertThrows(ResourceBusyException.class, pd::close);
            mr.close();
            QueuePair qp = pd.createQueuePair(QpInitAttributes.rc(cq, 4, 4));
            assertThrows(ResourceBusyException.class, pd::close);
            qp.close();
            pd.close();
            assertEquals(0, fabric.ledger().live(ResourceKind.PROTECTION_DOMAIN));
        }
    }

    @Test
    void completionQueueIsBusyWhileAQpUsesIt() {
        try (ProtectionDomain pd = device().allocateProtectionDomain()) {
            CompletionQueue send = device().createCompletionQueue(16, null);
            CompletionQueue recv = device().createCompletionQueue(16, null);
            QueuePair qp = pd.createQueuePair(QpInitAttributes.rc(send, 4, 4).withCompletionQueues(send, recv));
            assertThrows(ResourceBusyException.class, send::close);
            assertThrows(ResourceBusyException.class, recv::close);
            assertEquals(QpState.RESET, qp.state(), "a refused close leaves the QP as it was");
            qp.close();
            send.close();
            recv.close();
            assertEquals(0, fabric.ledger().live(ResourceKind.COMPLETION_QUEUE));
        }
    }

    @Test
    void completionChannelIsBusyWhileACqUsesIt() {
        CompletionChannel channel = device().createCompletionChannel();
        CompletionQueue cq = device().createCompletionQueue(16, channel);
        assertThrows(ResourceBusyException.class, channel::close);
        cq.close();
        channel.close();
        assertEquals(0, fabric.ledger().live(ResourceKind.COMPLETION_CHANNEL));
    }

    @Test
    void useAfterCloseIsRefused() {
        ProtectionDomain pd = device().allocateProtectionDomain();
        CompletionQueue cq = device().createCompletionQueue(16, null);
        QueuePair qp = pd.createQueuePair(QpInitAttributes.rc(cq, 4, 4));
        MemoryRegion mr = pd.register(ByteBuffer.allocateDirect(64));
        qp.close();
        assertThrows(ResourceClosedException.class, () -> qp.modify(QpAttributes.init(Loopback.PORT,
                Set.of(Access.LOCAL_WRITE))));
        assertRefused(ResourceClosedException.class, 0, () -> qp.postReceive(ReceiveWorkRequest.of(1, mr.sge())));
        assertRefused(ResourceClosedException.class, 0, () -> qp.postSend(SendWorkRequest.send(1, mr.sge())));
        cq.close();
        assertThrows(ResourceClosedException.class, () -> cq.poll(new WorkCompletion[1]));
        assertThrows(ResourceClosedException.class, () -> cq.requestNotify(false));
        mr.close();
        pd.close();
        assertThrows(ResourceClosedException.class, () -> pd.register(ByteBuffer.allocateDirect(64)));
        assertThrows(ResourceClosedException.class, () -> pd.createQueuePair(QpInitAttributes.rc(cq, 4, 4)));
    }

    @Test
    void closingTwiceIsANoOp() {
        CompletionChannel channel = device().createCompletionChannel();
        CompletionQueue cq = device().createCompletionQueue(16, channel);
        ProtectionDomain pd = device().allocateProtectionDomain();
        QueuePair qp = pd.createQueuePair(QpInitAttributes.rc(cq, 4, 4));
        MemoryRegion mr = pd.register(ByteBuffer.allocateDirect(64));
        long before = fabric.ledger().total();
        for (AutoCloseable r : List.<AutoCloseable>of(mr, qp, cq, channel, pd)) {
            assertDoesNotThrow(r::close);
            long afterFirst = fabric.ledger().total();
            assertDoesNotThrow(r::close);
            assertEquals(afterFirst, fabric.ledger().total(), "a second close of " + r + " counted again");
        }
        assertEquals(before - 5, fabric.ledger().total());
    }
}
