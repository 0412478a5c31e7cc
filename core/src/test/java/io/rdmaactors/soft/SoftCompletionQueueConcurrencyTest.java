package io.rdmaactors.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaactors.conformance.FabricConformance;
import io.rdmaactors.conformance.Loopback;
import io.rdmaactors.verbs.CompletionQueue;
import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.ProtectionDomain;
import io.rdmaactors.verbs.ReceiveWorkRequest;
import io.rdmaactors.verbs.SendWorkRequest;
import io.rdmaactors.verbs.WcStatus;
import io.rdmaactors.verbs.WorkCompletion;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * One soft CQ, several producers and a consumer: with the wire synchronous, each sender's thread
 * executes its requests and adds their receive completions to one CQ while another thread polls
 * it. Each completion is polled once, and the CQ's room comes back with each poll.
 */
class SoftCompletionQueueConcurrencyTest extends FabricConformance {

    private static final int SENDERS = 2;
    private static final int PER_SENDER = 500;
    private static final int WINDOW = 16;

    @Override
    protected Fabric openFabric() {
        return Fabric.open("soft", Map.of("wire", "sync"));
    }

    @Test
    void completionsAddedFromSeveralThreadsArePolledOnceEach() throws Exception {
        int messages = SENDERS * PER_SENDER;
        ProtectionDomain pd = opened(device().allocateProtectionDomain());
        // smaller than all the messages: its room must come back as it is polled
        CompletionQueue shared = opened(device().createCompletionQueue(SENDERS * WINDOW, null));
        Loopback[] loops = new Loopback[SENDERS];
        ExecutorService senders = Executors.newFixedThreadPool(SENDERS);
        try {
            for (int s = 0; s < SENDERS; s++) {
                loops[s] = loopback().pd(pd).cqB(shared).depths(WINDOW, WINDOW).cqe(4 * WINDOW).open();
            }
            // a sender posts a receive again once its completion was polled: the CQ never overruns
            Semaphore[] room = new Semaphore[SENDERS];
            Future<?>[] sending = new Future<?>[SENDERS];
            for (int s = 0; s < SENDERS; s++) {
                Loopback loop = loops[s];
                Semaphore polledOnes = room[s] = new Semaphore(0);
                int first = s * PER_SENDER;
                sending[s] = senders.submit(() -> {
                    MemoryRegion out = loop.a.register(8);
                    MemoryRegion in = loop.b.register(8 * WINDOW);
                    for (int i = 0; i < WINDOW; i++) {
                        loop.b.qp.postReceive(ReceiveWorkRequest.of(first + i, in.sge(8 * i, 8)));
                    }
                    for (int i = first; i < first + PER_SENDER; i++) {
                        if (i - first >= WINDOW) {
                            assertTrue(polledOnes.tryAcquire(STEP.toSeconds(), TimeUnit.SECONDS), "no poll");
                            assertEquals(WcStatus.SUCCESS, poll(loop.a.cq).status());
                            loop.b.qp.postReceive(ReceiveWorkRequest.of(i, in.sge(8 * (i % WINDOW), 8)));
                        }
                        loop.a.qp.postSend(SendWorkRequest.send(i, out.sge()));
                    }
                    return null;
                });
            }
            Set<Long> polled = new HashSet<>();
            WorkCompletion[] batch = new WorkCompletion[4];
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (polled.size() < messages && System.nanoTime() < deadline) {
                int n = shared.poll(batch);
                for (int i = 0; i < n; i++) {
                    assertEquals(WcStatus.SUCCESS, batch[i].status(), batch[i].toString());
                    assertTrue(polled.add(batch[i].wrId()), "polled twice: " + batch[i]);
                    room[(int) (batch[i].wrId() / PER_SENDER)].release();
                }
            }
            for (Future<?> f : sending) {
                f.get(STEP.toSeconds(), TimeUnit.SECONDS);
            }
            assertEquals(messages, polled.size(), "receive completions polled");
            assertNoCompletion(shared);
        } finally {
            senders.shutdownNow();
            for (Loopback loop : loops) {
                if (loop != null) {
                    loop.close();
                }
            }
        }
    }
}
