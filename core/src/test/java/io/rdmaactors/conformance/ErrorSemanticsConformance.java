package io.rdmaactors.conformance;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.rdmaactors.cm.AsyncEvent;
import io.rdmaactors.cm.AsyncEventType;
import io.rdmaactors.verbs.Access;
import io.rdmaactors.verbs.CompletionQueue;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.ProtectionDomain;
import io.rdmaactors.verbs.QpAttributes;
import io.rdmaactors.verbs.QpState;
import io.rdmaactors.verbs.QueuePair;
import io.rdmaactors.verbs.ReceiveWorkRequest;
import io.rdmaactors.verbs.ScatterGatherElement;
import io.rdmaactors.verbs.SendWorkRequest;
import io.rdmaactors.verbs.WcStatus;
import io.rdmaactors.verbs.WorkCompletion;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/** How RC operations fail: which status on which side, the QP states after, and flushing. */
public abstract class ErrorSemanticsConformance extends FabricConformance {

    /** 0.01 ms: RNR retries come quickly. */
    private static final int FAST_RNR_TIMER = 1;

    @ParameterizedTest
    @ValueSource(ints = {0, 2})
    void sendWithoutAReceiveFailsOnceRnrRetriesAreSpent(int rnrRetry) throws Exception {
        try (Loopback loop = loopback().rtr(a -> a.minRnrTimer(FAST_RNR_TIMER))
                .rts(a -> a.rnrRetry(rnrRetry)).open()) {
            MemoryRegion src = loop.a.register(pattern(16, 1));
            MemoryRegion inbox = loop.b.register(16);
            loop.a.qp.postSend(SendWorkRequest.send(1, src.sge()));
            WorkCompletion wc = poll(loop.a.cq);
            assertEquals(1, wc.wrId());
            assertEquals(WcStatus.RNR_RETRY_EXC_ERR, wc.status());
            awaitState(loop.a.qp, QpState.ERR);
            // the message was given up, not kept for a later receive
            loop.b.qp.postReceive(ReceiveWorkRequest.of(2, inbox.sge()));
            assertNoCompletion(loop.b.cq);
        }
    }

    @Test
    void sendRetriedUntilAReceiveIsPostedArrives() throws Exception {
        try (Loopback loop = loopback().rtr(a -> a.minRnrTimer(FAST_RNR_TIMER))
                .rts(a -> a.rnrRetry(7)).open()) {
            MemoryRegion src = loop.a.register(pattern(16, 2));
            MemoryRegion inbox = loop.b.register(16);
            loop.a.qp.postSend(SendWorkRequest.send(1, src.sge()));
            Thread.sleep(QUIET.toMillis());
            assertNoCompletion(loop.a.cq);
            loop.b.qp.postReceive(ReceiveWorkRequest.of(2, inbox.sge()));
            pollSuccess(loop.b.cq, 2);
            pollSuccess(loop.a.cq, 1);
            assertArrayEquals(patternBytes(16, 2), bytes(inbox.buffer(), 0, 16));
            assertEquals(QpState.RTS, loop.a.qp.state());
        }
    }

    @Test
    void sendWhoseRegionIsDeregisteredWhileItWaitsFailsItsNextTry() throws Exception {
        // B has no receive and A retries RNR forever: the send is outstanding when its region goes
        try (Loopback loop = loopback().rtr(a -> a.minRnrTimer(FAST_RNR_TIMER))
                .rts(a -> a.rnrRetry(7)).open()) {
            MemoryRegion src = loop.a.register(pattern(16, 16));
            MemoryRegion inbox = loop.b.register(16);
            loop.a.qp.postSend(SendWorkRequest.send(1, src.sge()));
            assertNoCompletion(loop.a.cq);
            // ibv_dereg_mr succeeds: the requester reads the region again on each try, and finds it gone
            src.close();
            WorkCompletion wc = poll(loop.a.cq);
            assertEquals(1, wc.wrId());
            assertEquals(WcStatus.LOC_PROT_ERR, wc.status());
            awaitState(loop.a.qp, QpState.ERR);
            loop.b.qp.postReceive(ReceiveWorkRequest.of(2, inbox.sge()));
            assertNoCompletion(loop.b.cq);
        }
    }

    @Test
    void receiveShorterThanTheMessageFailsBothSides() throws Exception {
        try (Loopback loop = loopback().open()) {
            MemoryRegion src = loop.a.register(pattern(32, 3));
            MemoryRegion inbox = loop.b.register(8);
            loop.b.qp.postReceive(ReceiveWorkRequest.of(1, inbox.sge()));
            loop.a.qp.postSend(SendWorkRequest.send(2, src.sge()));
            WorkCompletion recv = poll(loop.b.cq);
            assertEquals(1, recv.wrId());
            assertEquals(WcStatus.LOC_LEN_ERR, recv.status());
            WorkCompletion send = poll(loop.a.cq);
            assertEquals(2, send.wrId());
            assertEquals(WcStatus.REM_INV_REQ_ERR, send.status());
            awaitState(loop.a.qp, QpState.ERR);
            awaitState(loop.b.qp, QpState.ERR);
        }
    }

    /** Ways a remote access breaks the responder's region rules. */
    enum Violation {
        BAD_RKEY, OUT_OF_BOUNDS, NO_REMOTE_WRITE, NO_REMOTE_READ, NO_REMOTE_ATOMIC
    }

    @ParameterizedTest
    @EnumSource(Violation.class)
    void remoteAccessOutsideTheRegionsRightsFailsBothQps(Violation violation) throws Exception {
        try (Loopback loop = loopback().open()) {
            MemoryRegion local = loop.a.register(pattern(16, 4));
            MemoryRegion target = loop.b.register(pattern(64, 5), switch (violation) {
                // registered with the default access: local only, the least privilege
                case NO_REMOTE_WRITE -> new Access[0];
                case NO_REMOTE_READ -> new Access[] {Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_ATOMIC};
                case NO_REMOTE_ATOMIC -> new Access[] {Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ};
                default -> Access.values();
            });
            SendWorkRequest wr = switch (violation) {
                case BAD_RKEY -> SendWorkRequest.write(1, target.address(), ~target.rkey(), local.sge());
                case OUT_OF_BOUNDS -> SendWorkRequest.write(1, target.address(56), target.rkey(), local.sge());
                case NO_REMOTE_WRITE -> SendWorkRequest.write(1, target.address(), target.rkey(), local.sge());
                case NO_REMOTE_READ -> SendWorkRequest.read(1, target.address(), target.rkey(), local.sge());
                case NO_REMOTE_ATOMIC -> SendWorkRequest.fetchAdd(1, target.address(), target.rkey(), 1,
                        local.sge(0, 8));
            };
            loop.a.qp.postSend(wr);
            WorkCompletion wc = poll(loop.a.cq);
            assertEquals(1, wc.wrId());
            assertEquals(WcStatus.REM_ACCESS_ERR, wc.status(), violation.name());
            AsyncEvent e = awaitAsync(device(), ev -> ev.type() == AsyncEventType.QP_ACCESS_ERR, "QP_ACCESS_ERR");
            assertEquals(new AsyncEvent.QpEvent(AsyncEventType.QP_ACCESS_ERR, loop.b.qp.qpNum()), e);
            awaitState(loop.a.qp, QpState.ERR);
            awaitState(loop.b.qp, QpState.ERR);
            assertArrayEquals(patternBytes(64, 5), bytes(target.buffer(), 0, 64), "the target changed");
            assertArrayEquals(patternBytes(16, 4), bytes(local.buffer(), 0, 16), "the local buffer changed");
        }
    }

    @Test
    void atomicOnAnUnalignedAddressFails() throws Exception {
        try (Loopback loop = loopback().open()) {
            MemoryRegion result = loop.a.register(8);
            MemoryRegion target = loop.b.register(pattern(16, 6), Access.LOCAL_WRITE, Access.REMOTE_ATOMIC);
            loop.a.qp.postSend(SendWorkRequest.fetchAdd(1, target.address(4), target.rkey(), 1, result.sge()));
            WorkCompletion wc = poll(loop.a.cq);
            assertEquals(1, wc.wrId());
            assertFalse(wc.isSuccess(), "an unaligned atomic succeeded: " + wc);
            assertArrayEquals(patternBytes(16, 6), bytes(target.buffer(), 0, 16));
        }
    }

    @Test
    void localSgeWithABadLkeyIsALocalProtectionError() throws Exception {
        try (Loopback loop = loopback().open()) {
            MemoryRegion src = loop.a.register(pattern(16, 7));
            MemoryRegion inbox = loop.b.register(16);
            loop.b.qp.postReceive(ReceiveWorkRequest.of(1, inbox.sge()));
            loop.a.qp.postSend(SendWorkRequest.send(2, new ScatterGatherElement(src.address(), 16, ~src.lkey())));
            WorkCompletion wc = poll(loop.a.cq);
            assertEquals(2, wc.wrId());
            assertEquals(WcStatus.LOC_PROT_ERR, wc.status());
            awaitState(loop.a.qp, QpState.ERR);
            assertNoCompletion(loop.b.cq);
        }
    }

    @Test
    void localSgeOfAnotherProtectionDomainIsALocalProtectionError() throws Exception {
        ProtectionDomain other = opened(device().allocateProtectionDomain());
        MemoryRegion foreign = opened(other.register(pattern(16, 17)));
        try (Loopback loop = loopback().open()) {
            MemoryRegion inbox = loop.b.register(16);
            loop.b.qp.postReceive(ReceiveWorkRequest.of(1, inbox.sge()));
            loop.a.qp.postSend(SendWorkRequest.send(2, foreign.sge()));
            WorkCompletion wc = poll(loop.a.cq);
            assertEquals(2, wc.wrId());
            assertEquals(WcStatus.LOC_PROT_ERR, wc.status());
            awaitState(loop.a.qp, QpState.ERR);
            assertNoCompletion(loop.b.cq);
        }
    }

    @Test
    void aWriteToAQpWhoseAccessFlagsLackRemoteWriteFailsAndWritesNothing() throws Exception {
        try (Loopback loop = loopback()
                .rtr(a -> a.accessFlags(EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ))).open()) {
            MemoryRegion target = loop.b.register(pattern(16, 30), Access.LOCAL_WRITE, Access.REMOTE_WRITE);
            MemoryRegion src = loop.a.register(pattern(16, 31));
            loop.a.qp.postSend(SendWorkRequest.write(1, target.address(), target.rkey(), src.sge()));
            WorkCompletion wc = poll(loop.a.cq);
            assertEquals(1, wc.wrId());
            // an access error by the spec and on most HCAs; rxe NAKs an opcode its QP does not allow as an invalid request
            assertTrue(wc.status() == WcStatus.REM_ACCESS_ERR || wc.status() == WcStatus.REM_INV_REQ_ERR, wc.toString());
            awaitState(loop.a.qp, QpState.ERR);
            assertArrayEquals(patternBytes(16, 30), bytes(target.buffer(), 0, 16), "the region was written");
        }
    }

    @Test
    void rkeyOfAnotherProtectionDomainIsARemoteAccessError() throws Exception {
        ProtectionDomain other = opened(device().allocateProtectionDomain());
        MemoryRegion foreign = opened(other.register(pattern(16, 18), EnumSet.allOf(Access.class)));
        try (Loopback loop = loopback().open()) {
            MemoryRegion src = loop.a.register(pattern(16, 19));
            loop.a.qp.postSend(SendWorkRequest.write(1, foreign.address(), foreign.rkey(), src.sge()));
            WorkCompletion wc = poll(loop.a.cq);
            assertEquals(1, wc.wrId());
            assertEquals(WcStatus.REM_ACCESS_ERR, wc.status());
            awaitState(loop.a.qp, QpState.ERR);
            awaitState(loop.b.qp, QpState.ERR);
            assertArrayEquals(patternBytes(16, 18), bytes(foreign.buffer(), 0, 16), "the foreign region changed");
        }
    }

    @Test
    void receiveIntoARegionWithoutLocalWriteIsALocalProtectionError() throws Exception {
        try (Loopback loop = loopback().open()) {
            MemoryRegion src = loop.a.register(pattern(16, 20));
            MemoryRegion readOnly = loop.b.register(pattern(16, 21), Access.REMOTE_READ);
            loop.b.qp.postReceive(ReceiveWorkRequest.of(1, readOnly.sge()));
            loop.a.qp.postSend(SendWorkRequest.send(2, src.sge()));
            WorkCompletion recv = poll(loop.b.cq);
            assertEquals(1, recv.wrId());
            assertEquals(WcStatus.LOC_PROT_ERR, recv.status());
            // the responder's own failure reaches the requester as a remote operational error
            WorkCompletion send = poll(loop.a.cq);
            assertEquals(2, send.wrId());
            assertEquals(WcStatus.REM_OP_ERR, send.status());
            awaitState(loop.a.qp, QpState.ERR);
            awaitState(loop.b.qp, QpState.ERR);
            assertArrayEquals(patternBytes(16, 21), bytes(readOnly.buffer(), 0, 16), "the region was written");
        }
    }

    @Test
    void localSgeOutsideItsRegionIsALocalProtectionError() throws Exception {
        try (Loopback loop = loopback().open()) {
            MemoryRegion src = loop.a.register(pattern(16, 8));
            MemoryRegion inbox = loop.b.register(64);
            loop.b.qp.postReceive(ReceiveWorkRequest.of(1, inbox.sge()));
            loop.a.qp.postSend(SendWorkRequest.send(2, new ScatterGatherElement(src.address(8), 16, src.lkey())));
            WorkCompletion wc = poll(loop.a.cq);
            assertEquals(2, wc.wrId());
            assertEquals(WcStatus.LOC_PROT_ERR, wc.status());
            assertNoCompletion(loop.b.cq);
        }
    }

    /**
     * A range [start, start + length) whose end passes Long.MAX_VALUE: as an unsigned 64-bit range
     * it lies beyond every region, so verbs refuse it by the key's bounds.
     */
    private static final long WRAPPING_START = Long.MAX_VALUE - 7;

    @Test
    void localSgeWhoseEndWrapsIsALocalProtectionError() throws Exception {
        try (Loopback loop = loopback().open()) {
            MemoryRegion src = loop.a.register(pattern(16, 10));
            MemoryRegion inbox = loop.b.register(16);
            loop.b.qp.postReceive(ReceiveWorkRequest.of(1, inbox.sge()));
            loop.a.qp.postSend(SendWorkRequest.send(2, new ScatterGatherElement(WRAPPING_START, 16, src.lkey())));
            WorkCompletion wc = poll(loop.a.cq);
            assertEquals(2, wc.wrId());
            assertEquals(WcStatus.LOC_PROT_ERR, wc.status());
            awaitState(loop.a.qp, QpState.ERR);
            // neither QP was left locked: another thread still moves both to ERR
            enterErrFromAnotherThread(loop.a.qp);
            enterErrFromAnotherThread(loop.b.qp);
            WorkCompletion flushed = poll(loop.b.cq);
            assertEquals(1, flushed.wrId());
            assertEquals(WcStatus.WR_FLUSH_ERR, flushed.status(), "the receive was consumed");
        }
    }

    /** A lock the posting thread kept would make this hang, not pass: a lock is reentrant. */
    private static void enterErrFromAnotherThread(QueuePair qp) throws Exception {
        CompletableFuture.runAsync(() -> qp.modify(QpAttributes.of().state(QpState.ERR)))
                .get(STEP.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Remote operations that name a range of the responder's memory. */
    enum RemoteOperation {
        WRITE, READ, ATOMIC
    }

    @ParameterizedTest
    @EnumSource(RemoteOperation.class)
    void remoteRangeWhoseEndWrapsIsARemoteAccessError(RemoteOperation operation) throws Exception {
        try (Loopback loop = loopback().open()) {
            MemoryRegion local = loop.a.register(pattern(16, 12));
            MemoryRegion target = loop.b.register(pattern(16, 13), Access.values());
            loop.a.qp.postSend(switch (operation) {
                case WRITE -> SendWorkRequest.write(1, WRAPPING_START, target.rkey(), local.sge());
                case READ -> SendWorkRequest.read(1, WRAPPING_START, target.rkey(), local.sge());
                case ATOMIC -> SendWorkRequest.fetchAdd(1, WRAPPING_START, target.rkey(), 1, local.sge(0, 8));
            });
            WorkCompletion wc = poll(loop.a.cq);
            assertEquals(1, wc.wrId());
            assertEquals(WcStatus.REM_ACCESS_ERR, wc.status(), operation.name());
            awaitState(loop.a.qp, QpState.ERR);
            awaitState(loop.b.qp, QpState.ERR);
            // neither QP was left locked: another thread still moves both to ERR
            enterErrFromAnotherThread(loop.a.qp);
            enterErrFromAnotherThread(loop.b.qp);
            assertArrayEquals(patternBytes(16, 13), bytes(target.buffer(), 0, 16), "the target changed");
            assertArrayEquals(patternBytes(16, 12), bytes(local.buffer(), 0, 16), "the local buffer changed");
        }
    }

    @ParameterizedTest
    @EnumSource(value = RemoteOperation.class, names = {"READ", "ATOMIC"})
    void readOrAtomicToAResponderWithoutResourcesIsAnInvalidRequest(RemoteOperation operation) throws Exception {
        // max_dest_rd_atomic 0: the responder keeps no state for a read or atomic, so it takes none
        try (Loopback loop = loopback().rtr(a -> a.maxDestRdAtomic(0)).open()) {
            MemoryRegion local = loop.a.register(pattern(16, 14));
            MemoryRegion target = loop.b.register(pattern(16, 15), Access.values());
            loop.a.qp.postSend(operation == RemoteOperation.READ
                    ? SendWorkRequest.read(1, target.address(), target.rkey(), local.sge())
                    : SendWorkRequest.fetchAdd(1, target.address(), target.rkey(), 1, local.sge(0, 8)));
            WorkCompletion wc = poll(loop.a.cq);
            assertEquals(1, wc.wrId());
            assertEquals(WcStatus.REM_INV_REQ_ERR, wc.status(), operation.name());
            awaitState(loop.a.qp, QpState.ERR);
            awaitState(loop.b.qp, QpState.ERR);
            assertArrayEquals(patternBytes(16, 15), bytes(target.buffer(), 0, 16), "the target changed");
            assertArrayEquals(patternBytes(16, 14), bytes(local.buffer(), 0, 16), "the local buffer changed");
        }
    }

    @Test
    void enteringErrFlushesEveryOutstandingRequestOnce() throws Exception {
        // B posts no receive and A retries forever: A's sends stay outstanding until ERR
        try (Loopback loop = loopback().rts(a -> a.rnrRetry(7)).open()) {
            MemoryRegion buf = loop.a.register(64);
            loop.a.qp.postReceive(ReceiveWorkRequest.of(100, buf.sge(0, 16)), ReceiveWorkRequest.of(101,
                    buf.sge(16, 16)));
            loop.a.qp.postSend(SendWorkRequest.send(1, buf.sge(32, 8)),
                    SendWorkRequest.send(2, buf.sge(40, 8)).unsignaled(),
                    SendWorkRequest.send(3, buf.sge(48, 8)));
            assertNoCompletion(loop.a.cq);
            loop.a.qp.modify(QpAttributes.of().state(QpState.ERR));
            List<WorkCompletion> flushed = poll(loop.a.cq, 5);
            for (WorkCompletion wc : flushed) {
                assertEquals(WcStatus.WR_FLUSH_ERR, wc.status(), wc.toString());
                assertEquals(loop.a.qp.qpNum(), wc.qpNum());
            }
            assertEquals(Set.of(1L, 2L, 3L, 100L, 101L),
                    flushed.stream().map(WorkCompletion::wrId).collect(Collectors.toSet()));
            assertNoCompletion(loop.a.cq);
            assertNoCompletion(loop.b.cq);
        }
    }

    @Test
    void closingAQpFlushesItFirst() {
        try (Loopback loop = loopback().open()) {
            MemoryRegion buf = loop.a.register(32);
            loop.a.qp.postReceive(ReceiveWorkRequest.of(1, buf.sge(0, 16)), ReceiveWorkRequest.of(2, buf.sge(16, 16)));
            loop.a.qp.close();
            List<WorkCompletion> flushed = poll(loop.a.cq, 2);
            assertEquals(List.of(1L, 2L), flushed.stream().map(WorkCompletion::wrId).toList());
            flushed.forEach(wc -> assertEquals(WcStatus.WR_FLUSH_ERR, wc.status()));
        }
    }

    @Test
    void overflowingACqRaisesCqErrAndFailsItsQps() throws Exception {
        try (CompletionQueue tiny = device().createCompletionQueue(2, null)) {
            int messages = tiny.capacity() + 1;
            try (Loopback loop = loopback().cqB(tiny).depths(messages, messages).open()) {
                MemoryRegion src = loop.a.register(8);
                MemoryRegion inbox = loop.b.register(8 * messages);
                for (int i = 0; i < messages; i++) {
                    loop.b.qp.postReceive(ReceiveWorkRequest.of(i, inbox.sge(i * 8, 8)));
                }
                for (int i = 0; i < messages; i++) {
                    loop.a.qp.postSend(SendWorkRequest.send(i, src.sge()).unsignaled());
                }
                AsyncEvent e = awaitAsync(device(), ev -> ev.type() == AsyncEventType.CQ_ERR, "CQ_ERR");
                assertEquals(new AsyncEvent.CqEvent(AsyncEventType.CQ_ERR, tiny.handle()), e);
                awaitState(loop.b.qp, QpState.ERR);
            }
        }
    }
}
