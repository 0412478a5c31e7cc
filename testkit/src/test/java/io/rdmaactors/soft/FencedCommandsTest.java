package io.rdmaactors.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaactors.actors.RdmaProtocol;
import io.rdmaactors.actors.RemoteRegion;
import io.rdmaactors.testkit.RdmaTestKit;
import io.rdmaactors.verbs.Access;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A connection's commands take effect in the order they came: what follows an outstanding Read
 * is fenced behind it, since the peer reads a Read's data as its response goes out (between
 * processes, after it ran the requests that followed). With the soft fabric's wire held, the
 * Write waits in the QP's send queue instead of going out behind the Read.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FencedCommandsTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    @Test
    void aWriteAfterAnOutstandingReadWaitsForIt() throws Exception {
        RdmaTestKit kit = RdmaTestKit.create();
        CountDownLatch held = new CountDownLatch(1);
        try {
            Assumptions.assumeTrue(kit.fabric() instanceof SoftFabric, "holds the soft fabric's wire");
            RdmaTestKit.Listener listener = kit.listen(8);
            RdmaTestKit.Pair pair = kit.connect(listener);
            ByteBuffer memory = ByteBuffer.allocateDirect(8);
            memory.put(0, (byte) 1);
            var exported = kit.<RdmaProtocol.ExportReply>probe();
            pair.server().tell(new RdmaProtocol.Export(memory, EnumSet.of(Access.REMOTE_READ, Access.REMOTE_WRITE),
                    exported.getRef()));
            RemoteRegion region = exported.expectMessageClass(RdmaProtocol.Exported.class, WAIT).region();
            SoftQueuePair qp = (SoftQueuePair) kit.faults().connection(pair.clientConnected().local(),
                    pair.clientConnected().remote()).orElseThrow().queuePair();

            // the wire is busy with something else, on its own thread: an empty poll would carry it
            // too, so the QP actors' polls after the Export (100 us at most) end first
            Thread.sleep(50);
            CountDownLatch holding = new CountDownLatch(1);
            ((SoftFabric) kit.fabric()).onWire(() -> {
                holding.countDown();
                await(held);
            });
            assertTrue(holding.await(WAIT.toMillis(), TimeUnit.MILLISECONDS), "the wire is held");
            pair.client().tell(new RdmaProtocol.Read(region, 0, 1, "read"));
            pair.client().tell(RdmaProtocol.Write.of(region, 0, new byte[] {2}, "write"));
            int inflight = awaitPosted(qp, 2);
            assertEquals(1, inflight, "only the Read went out; the Write waits for it");
            held.countDown();

            assertEquals(1, pair.clientEvents().expectMessageClass(RdmaProtocol.ReadCompleted.class, WAIT).data()
                    .apply(0));
            assertEquals("write", pair.clientEvents().expectMessageClass(RdmaProtocol.Acked.class, WAIT).token());
            assertEquals(2, memory.get(0));
            kit.close(pair);
            kit.unbind(listener);
            kit.awaitNoLeaks(WAIT);
        } finally {
            held.countDown();
            kit.close();
        }
    }

    /** Waits until the QP holds {@code count} requests; returns how many of them went out. */
    private static int awaitPosted(SoftQueuePair qp, int count) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (true) {
            qp.sendLock.lock();
            try {
                if (qp.requester.posted() == count) {
                    return qp.requester.inflight.size();
                }
            } finally {
                qp.sendLock.unlock();
            }
            assertTrue(System.nanoTime() < deadline, count + " requests posted");
            Thread.sleep(1);
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
