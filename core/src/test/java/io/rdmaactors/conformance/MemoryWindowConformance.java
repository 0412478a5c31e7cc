package io.rdmaactors.conformance;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.rdmaactors.verbs.Access;
import io.rdmaactors.verbs.InvalidRequestException;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.MemoryWindow;
import io.rdmaactors.verbs.ProtectionDomain;
import io.rdmaactors.verbs.QpState;
import io.rdmaactors.verbs.ResourceClosedException;
import io.rdmaactors.verbs.ResourceKind;
import io.rdmaactors.verbs.SendWorkRequest;
import io.rdmaactors.verbs.VerbsException;
import io.rdmaactors.verbs.WcOpcode;
import io.rdmaactors.verbs.WcStatus;
import io.rdmaactors.verbs.WorkCompletion;
import java.util.Arrays;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Type 2 memory windows: a bind posted on a QP grants that QP's peer, and no other QP of the
 * domain, the rights it names over a range of a region registered with MW_BIND; a local
 * invalidation takes them back. The region is registered for local use only, so every remote
 * access below goes through the window's key.
 */
public abstract class MemoryWindowConformance extends FabricConformance {

    private static final Set<Access> READ_WRITE = Set.of(Access.REMOTE_READ, Access.REMOTE_WRITE);

    /** Binds {@code mw} over all of {@code region} on the loopback's B side and waits for the bind to complete. */
    private static void bind(Loopback loop, MemoryWindow mw, MemoryRegion region, Set<Access> rights, long wrId) {
        loop.b.qp.postSend(SendWorkRequest.bind(wrId, mw, region, rights));
        WorkCompletion wc = pollSuccess(loop.b.cq, wrId);
        assertEquals(WcOpcode.BIND_MW, wc.opcode());
    }

    /** Posts {@code bind} on the B side: it completes with MW_BIND_ERR and B's QP enters ERR. */
    private static void assertBindFails(Loopback loop, SendWorkRequest bind) throws InterruptedException {
        loop.b.qp.postSend(bind);
        WorkCompletion wc = poll(loop.b.cq);
        assertEquals(bind.wrId(), wc.wrId());
        assertEquals(WcStatus.MW_BIND_ERR, wc.status(), wc.toString());
        awaitState(loop.b.qp, QpState.ERR);
    }

    /** A's write of {@code src} through {@code rkey}, and its completion. */
    private static WorkCompletion write(Loopback loop, MemoryRegion src, MemoryRegion target, int offset, int rkey,
                                        long wrId) {
        loop.a.qp.postSend(SendWorkRequest.write(wrId, target.address(offset), rkey, src.sge()));
        return poll(loop.a.cq);
    }

    @Test
    void aBoundWindowGrantsItsRightsThroughItsNewKey() {
        try (Loopback loop = loopback().open()) {
            MemoryRegion target = loop.b.register(pattern(64, 1), Access.LOCAL_WRITE, Access.MW_BIND);
            MemoryRegion src = loop.a.register(pattern(16, 2));
            MemoryRegion readBack = loop.a.register(8, Access.LOCAL_WRITE);
            try (MemoryWindow mw = loop.b.pd.allocateMemoryWindow()) {
                int allocated = mw.rkey();
                bind(loop, mw, target, READ_WRITE, 7);
                assertEquals(allocated & 0xFFFFFF00, mw.rkey() & 0xFFFFFF00, "a bind keeps the window's index");
                assertNotEquals(allocated, mw.rkey(), "a bind gives the window a new key");

                WorkCompletion wrote = write(loop, src, target, 8, mw.rkey(), 1);
                assertEquals(WcStatus.SUCCESS, wrote.status(), wrote.toString());
                assertArrayEquals(patternBytes(16, 2), bytes(target.buffer(), 8, 16));
                loop.a.qp.postSend(SendWorkRequest.read(2, target.address(), mw.rkey(), readBack.sge()));
                pollSuccess(loop.a.cq, 2);
                assertArrayEquals(Arrays.copyOf(patternBytes(64, 1), 8), bytes(readBack.buffer(), 0, 8));

                loop.b.qp.postSend(SendWorkRequest.localInvalidate(8, mw.rkey()));
                assertEquals(WcOpcode.LOCAL_INV, pollSuccess(loop.b.cq, 8).opcode());
            }
        }
    }

    @Test
    void anInvalidatedWindowRefusesItsOldKeyAndRebindsUnderANewOne() throws Exception {
        try (Loopback loop = loopback().open()) {
            MemoryRegion target = loop.b.register(pattern(64, 3), Access.LOCAL_WRITE, Access.MW_BIND);
            MemoryRegion src = loop.a.register(pattern(16, 4));
            try (MemoryWindow mw = loop.b.pd.allocateMemoryWindow()) {
                bind(loop, mw, target, READ_WRITE, 1);
                int first = mw.rkey();
                loop.b.qp.postSend(SendWorkRequest.localInvalidate(2, first));
                pollSuccess(loop.b.cq, 2);
                bind(loop, mw, target, READ_WRITE, 3);
                assertNotEquals(first, mw.rkey(), "the rebound window's key");
                assertEquals(WcStatus.SUCCESS, write(loop, src, target, 0, mw.rkey(), 4).status());

                WorkCompletion refused = write(loop, src, target, 32, first, 5);
                assertEquals(WcStatus.REM_ACCESS_ERR, refused.status(), refused.toString());
                awaitState(loop.a.qp, QpState.ERR);
                assertArrayEquals(patternBytes(16, 4), bytes(target.buffer(), 0, 16), "the granted write");
                assertArrayEquals(Arrays.copyOfRange(patternBytes(64, 3), 16, 64), bytes(target.buffer(), 16, 48),
                        "the refused write changed the region");
            }
        }
    }

    @Test
    void aWindowGrantsNothingToAnotherQpOfItsDomain() throws Exception {
        ProtectionDomain pd = opened(device().allocateProtectionDomain());
        try (Loopback bound = loopback().pd(pd).open(); Loopback other = loopback().pd(pd).open()) {
            MemoryRegion target = bound.b.register(pattern(64, 5), Access.LOCAL_WRITE, Access.MW_BIND);
            MemoryRegion src = other.a.register(pattern(16, 6));
            try (MemoryWindow mw = pd.allocateMemoryWindow()) {
                bind(bound, mw, target, READ_WRITE, 1);
                WorkCompletion refused = write(other, src, target, 0, mw.rkey(), 2);
                assertEquals(WcStatus.REM_ACCESS_ERR, refused.status(), refused.toString());
                awaitState(other.a.qp, QpState.ERR);
                assertArrayEquals(patternBytes(64, 5), bytes(target.buffer(), 0, 64));
                MemoryRegion mine = bound.a.register(pattern(16, 7));
                assertEquals(WcStatus.SUCCESS, write(bound, mine, target, 0, mw.rkey(), 3).status(),
                        "the QP it was bound on");
                bound.b.qp.postSend(SendWorkRequest.localInvalidate(4, mw.rkey()));
                pollSuccess(bound.b.cq, 4);
            }
        }
    }

    @Test
    void aWindowGrantsOnlyTheRightsItWasBoundWith() throws Exception {
        try (Loopback loop = loopback().open()) {
            MemoryRegion target = loop.b.register(pattern(64, 8), Access.LOCAL_WRITE, Access.MW_BIND);
            MemoryRegion src = loop.a.register(pattern(16, 9));
            try (MemoryWindow mw = loop.b.pd.allocateMemoryWindow()) {
                bind(loop, mw, target, Set.of(Access.REMOTE_READ), 1);
                WorkCompletion refused = write(loop, src, target, 0, mw.rkey(), 2);
                assertEquals(WcStatus.REM_ACCESS_ERR, refused.status(), refused.toString());
                awaitState(loop.a.qp, QpState.ERR);
                assertArrayEquals(patternBytes(64, 8), bytes(target.buffer(), 0, 64));
            }
        }
    }

    @Test
    void aBindOverARegionWithoutMwBindFailsAndStopsTheQp() throws Exception {
        try (Loopback loop = loopback().open()) {
            MemoryRegion plain = loop.b.register(64, Access.LOCAL_WRITE);
            try (MemoryWindow mw = loop.b.pd.allocateMemoryWindow()) {
                assertBindFails(loop, SendWorkRequest.bind(1, mw, plain, plain.address(), 64, READ_WRITE));
            }
        }
    }

    @Test
    void aBoundWindowIsNotBoundAgainUntilInvalidated() throws Exception {
        try (Loopback loop = loopback().open()) {
            MemoryRegion target = loop.b.register(64, Access.LOCAL_WRITE, Access.MW_BIND);
            try (MemoryWindow mw = loop.b.pd.allocateMemoryWindow()) {
                bind(loop, mw, target, READ_WRITE, 1);
                assertBindFails(loop, SendWorkRequest.bind(2, mw, target, target.address(), 64, READ_WRITE));
            }
        }
    }

    @Test
    void aRegionWithABoundWindowStaysRegisteredAndWindowsAreCounted() {
        long before = fabric.ledger().live(ResourceKind.MEMORY_WINDOW);
        try (Loopback loop = loopback().open()) {
            MemoryRegion target = loop.b.register(64, Access.LOCAL_WRITE, Access.MW_BIND);
            MemoryWindow mw = loop.b.pd.allocateMemoryWindow();
            assertEquals(before + 1, fabric.ledger().live(ResourceKind.MEMORY_WINDOW));
            bind(loop, mw, target, READ_WRITE, 1);
            assertThrows(VerbsException.class, target::close, "deregistering a region a window is bound to");
            loop.b.qp.postSend(SendWorkRequest.localInvalidate(2, mw.rkey()));
            pollSuccess(loop.b.cq, 2);
            mw.close();
            assertEquals(before, fabric.ledger().live(ResourceKind.MEMORY_WINDOW));
        }
    }

    @Test
    void aBindOfAClosedWindowOrRegionIsRefusedAtItsPost() {
        try (Loopback loop = loopback().open()) {
            MemoryRegion target = loop.b.register(64, Access.LOCAL_WRITE, Access.MW_BIND);
            MemoryWindow closed = loop.b.pd.allocateMemoryWindow();
            closed.close();
            assertRefused(ResourceClosedException.class, 0, () -> loop.b.qp.postSend(
                    SendWorkRequest.bind(1, closed, target, target.address(), 64, READ_WRITE)));
            MemoryRegion gone = loop.b.register(64, Access.LOCAL_WRITE, Access.MW_BIND);
            gone.close();
            try (MemoryWindow mw = loop.b.pd.allocateMemoryWindow()) {
                assertRefused(ResourceClosedException.class, 0, () -> loop.b.qp.postSend(
                        SendWorkRequest.bind(2, mw, gone, gone.address(), 64, READ_WRITE)));
                bind(loop, mw, target, READ_WRITE, 3); // the QP took neither and still runs
                loop.b.qp.postSend(SendWorkRequest.localInvalidate(4, mw.rkey()));
                pollSuccess(loop.b.cq, 4);
            }
        }
    }

    @Test
    void aBindGrantsRemoteRightsOnly() {
        try (Loopback loop = loopback().open()) {
            MemoryRegion target = loop.b.register(64, Access.LOCAL_WRITE, Access.MW_BIND);
            try (MemoryWindow mw = loop.b.pd.allocateMemoryWindow()) {
                assertThrows(InvalidRequestException.class, () -> SendWorkRequest.bind(1, mw, target, target.address(),
                        64, Set.of(Access.LOCAL_WRITE)));
            }
        }
    }
}
