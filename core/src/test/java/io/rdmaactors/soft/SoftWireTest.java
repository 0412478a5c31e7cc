package io.rdmaactors.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaactors.conformance.Loopback;
import io.rdmaactors.verbs.Access;
import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.SendWorkRequest;
import io.rdmaactors.verbs.WcStatus;
import io.rdmaactors.verbs.WorkCompletion;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A work request between QPs of one JVM runs after its post returned, on the fabric's wire, as a
 * device runs it: the buffer is the fabric's until the completion, which a program that reuses
 * it early finds out here as on hardware. Option {@code wire=sync} runs it inside the post.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SoftWireTest {

    @Test
    void aWriteRunsAfterItsPostReturnedAndReadsItsBufferThen() throws Exception {
        try (Fabric fabric = Fabric.open("soft");
             Loopback loop = Loopback.on(fabric.devices().get(0)).open()) {
            MemoryRegion target = loop.b.register(8, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
            MemoryRegion source = loop.a.register(8);
            source.buffer().putLong(0, 1);
            CountDownLatch held = new CountDownLatch(1);
            ((SoftFabric) fabric).onWire(() -> await(held)); // the wire is busy with something else

            loop.a.qp.postSend(SendWorkRequest.write(1, target.address(), target.rkey(), source.sge()));
            assertEquals(0, loop.a.cq.poll(new WorkCompletion[1]), "no completion while the wire has not carried it");
            assertEquals(0, target.buffer().getLong(0), "nothing written yet");
            source.buffer().putLong(0, 2); // reused before its completion: what goes out is what is there then
            held.countDown();

            WorkCompletion[] wc = new WorkCompletion[1];
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (loop.a.cq.poll(wc) == 0) {
                assertTrue(System.nanoTime() < deadline, "the write completes once the wire is free");
                Thread.onSpinWait();
            }
            assertEquals(WcStatus.SUCCESS, wc[0].status());
            assertEquals(2, target.buffer().getLong(0));
        }
    }

    @Test
    void withWireSyncAWriteIsDoneWhenItsPostReturns() throws Exception {
        try (Fabric fabric = Fabric.open("soft", Map.of("wire", "sync"));
             Loopback loop = Loopback.on(fabric.devices().get(0)).open()) {
            MemoryRegion target = loop.b.register(8, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
            MemoryRegion source = loop.a.register(ByteBuffer.allocateDirect(8).putLong(0, 7));
            loop.a.qp.postSend(SendWorkRequest.write(1, target.address(), target.rkey(), source.sge()));
            WorkCompletion[] wc = new WorkCompletion[1];
            assertEquals(1, loop.a.cq.poll(wc));
            assertEquals(WcStatus.SUCCESS, wc[0].status());
            assertEquals(7, target.buffer().getLong(0), "written before the post returned");
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
