package io.rdmaactors.soft;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rdmaactors.conformance.Loopback;
import io.rdmaactors.verbs.Access;
import io.rdmaactors.verbs.CompletionQueue;
import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.MemoryWindow;
import io.rdmaactors.verbs.ReceiveWorkRequest;
import io.rdmaactors.verbs.SendWorkRequest;
import io.rdmaactors.verbs.WcOpcode;
import io.rdmaactors.verbs.WcStatus;
import io.rdmaactors.verbs.WorkCompletion;
import java.nio.ByteBuffer;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * What the soft fabric keeps of memory windows beyond what the conformance suite can ask of rxe:
 * the window's own bounds (rxe checks an access against the region's only), a bind completing in
 * its place in the send queue behind requests still in flight, and nothing after a failed bind
 * going out.
 */
class SoftMemoryWindowTest {

    private static WorkCompletion poll(CompletionQueue cq) {
        WorkCompletion[] out = new WorkCompletion[1];
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (cq.poll(out) == 0) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no completion");
            }
            Thread.onSpinWait();
        }
        return out[0];
    }

    @Test
    void anAccessOutsideTheWindowButInsideTheRegionIsRefused() {
        try (Fabric fabric = Fabric.open("soft");
             Loopback loop = Loopback.on(fabric.devices().get(0)).open()) {
            MemoryRegion target = loop.b.register(ByteBuffer.allocateDirect(64), Access.LOCAL_WRITE, Access.MW_BIND);
            MemoryRegion src = loop.a.register(ByteBuffer.allocateDirect(16));
            try (MemoryWindow mw = loop.b.pd.allocateMemoryWindow()) {
                loop.b.qp.postSend(SendWorkRequest.bind(1, mw, target, target.address(16), 32,
                        Set.of(Access.REMOTE_WRITE)));
                assertEquals(WcStatus.SUCCESS, poll(loop.b.cq).status());
                loop.a.qp.postSend(SendWorkRequest.write(2, target.address(16), mw.rkey(), src.sge()));
                assertEquals(WcStatus.SUCCESS, poll(loop.a.cq).status(), "inside the window");
                loop.a.qp.postSend(SendWorkRequest.write(3, target.address(40), mw.rkey(), src.sge()));
                assertEquals(WcStatus.REM_ACCESS_ERR, poll(loop.a.cq).status(), "past the window's end");
            }
        }
    }

    @Test
    void aBindPostedBehindASendCompletesAfterIt() {
        try (Fabric fabric = Fabric.open("soft");
             Loopback loop = Loopback.on(fabric.devices().get(0)).open()) {
            MemoryRegion region = loop.a.register(ByteBuffer.allocateDirect(64), Access.LOCAL_WRITE, Access.MW_BIND);
            MemoryRegion inbox = loop.b.register(ByteBuffer.allocateDirect(64), Access.LOCAL_WRITE);
            loop.b.qp.postReceive(ReceiveWorkRequest.of(8, inbox.sge(0, 32)), ReceiveWorkRequest.of(9, inbox.sge(32, 32)));
            try (MemoryWindow mw = loop.a.pd.allocateMemoryWindow()) {
                loop.a.qp.postSend(SendWorkRequest.send(1, region.sge(0, 8)),
                        SendWorkRequest.bind(2, mw, region, region.address(), 64, Set.of(Access.REMOTE_READ)),
                        SendWorkRequest.localInvalidate(3, mw.nextRkey()),
                        SendWorkRequest.send(4, region.sge(0, 8)).unsignaled());
                WorkCompletion[] wcs = {poll(loop.a.cq), poll(loop.a.cq), poll(loop.a.cq)};
                assertArrayEquals(new long[] {1, 2, 3}, new long[] {wcs[0].wrId(), wcs[1].wrId(), wcs[2].wrId()});
                assertArrayEquals(new WcOpcode[] {WcOpcode.SEND, WcOpcode.BIND_MW, WcOpcode.LOCAL_INV},
                        new WcOpcode[] {wcs[0].opcode(), wcs[1].opcode(), wcs[2].opcode()});
            }
        }
    }

    @Test
    void nothingPostedAfterAFailedBindTakesEffect() throws InterruptedException {
        // across a link, where a request is written to the socket as it is posted
        try (Fabric fabric = OverLinks.fabric();
             Loopback loop = Loopback.on(fabric.devices().get(0)).throughCm(fabric).open()) {
            MemoryRegion plain = loop.a.register(ByteBuffer.allocateDirect(64), Access.LOCAL_WRITE);
            MemoryRegion inbox = loop.b.register(ByteBuffer.allocateDirect(64), Access.LOCAL_WRITE);
            MemoryRegion target = loop.b.register(ByteBuffer.allocateDirect(8), Access.LOCAL_WRITE, Access.REMOTE_WRITE);
            plain.buffer().putLong(0, -1L);
            loop.b.qp.postReceive(ReceiveWorkRequest.of(8, inbox.sge(0, 32)), ReceiveWorkRequest.of(9, inbox.sge(32, 32)));
            try (MemoryWindow mw = loop.a.pd.allocateMemoryWindow()) {
                loop.a.qp.postSend(SendWorkRequest.send(1, plain.sge(0, 8)),
                        SendWorkRequest.bind(2, mw, plain, plain.address(), 64, Set.of(Access.REMOTE_READ)),
                        SendWorkRequest.write(3, target.address(), target.rkey(), plain.sge(0, 8)));
                WorkCompletion[] wcs = {poll(loop.a.cq), poll(loop.a.cq), poll(loop.a.cq)};
                assertArrayEquals(new WcStatus[] {WcStatus.SUCCESS, WcStatus.MW_BIND_ERR, WcStatus.WR_FLUSH_ERR},
                        new WcStatus[] {wcs[0].status(), wcs[1].status(), wcs[2].status()});
                WorkCompletion first = poll(loop.b.cq);
                assertEquals(8, first.wrId());
                assertEquals(WcStatus.SUCCESS, first.status());
                Thread.sleep(100); // the link's time to carry the Write, had it gone out
                assertEquals(0L, target.buffer().getLong(0), "the Write after the failed bind took effect");
            }
        }
    }
}
