package io.rdmaactors.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rdmaactors.conformance.ErrorSemanticsConformance;
import io.rdmaactors.conformance.Loopback;
import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.QpAttributes;
import io.rdmaactors.verbs.QpState;
import io.rdmaactors.verbs.ReceiveWorkRequest;
import io.rdmaactors.verbs.SendWorkRequest;
import io.rdmaactors.verbs.WcStatus;
import io.rdmaactors.verbs.WorkCompletion;
import java.nio.ByteOrder;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The shared suite, and the soft receive queue's own concurrency: receives are posted without
 * the lock the responder takes them under, so these race posts against the responder and against
 * a flush (the native providers' queues are the device's, and the shared suite covers them).
 */
class SoftErrorSemanticsConformanceTest extends ErrorSemanticsConformance {

    private static final int POSTERS = 2;
    private static final int PER_POSTER = 200;

    @Override
    protected Fabric openFabric() {
        return Fabric.open("soft");
    }

    @Test
    void receivesPostedFromSeveralThreadsWhileSendsTakeThemEachTakeOneSend() throws Exception {
        int messages = POSTERS * PER_POSTER;
        ExecutorService posters = Executors.newFixedThreadPool(POSTERS);
        try (Loopback loop = loopback().depths(32, messages).cqe(2 * messages).rts(a -> a.rnrRetry(7)).open()) {
            MemoryRegion out = loop.a.register(8 * messages);
            MemoryRegion in = loop.b.register(8 * messages);
            CountDownLatch start = new CountDownLatch(1);
            Future<?>[] posting = new Future<?>[POSTERS];
            for (int t = 0; t < POSTERS; t++) {
                int first = t * PER_POSTER;
                posting[t] = posters.submit(() -> {
                    start.await();
                    for (int i = first; i < first + PER_POSTER; i++) {
                        loop.b.qp.postReceive(ReceiveWorkRequest.of(i, in.sge(8 * i, 8)));
                    }
                    return null;
                });
            }
            start.countDown();
            int completed = 0;
            for (int i = 0; i < messages; i++) {
                out.buffer().order(ByteOrder.nativeOrder()).putLong(8 * i, i);
                if (i - completed == 32) {
                    assertEquals(WcStatus.SUCCESS, poll(loop.a.cq).status());
                    completed++;
                }
                loop.a.qp.postSend(SendWorkRequest.send(i, out.sge(8 * i, 8)));
            }
            for (Future<?> f : posting) {
                f.get(STEP.toSeconds(), TimeUnit.SECONDS);
            }
            Set<Long> delivered = new HashSet<>();
            Set<Long> receives = new HashSet<>();
            for (WorkCompletion wc : poll(loop.b.cq, messages)) {
                assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
                receives.add(wc.wrId());
                delivered.add(in.buffer().order(ByteOrder.nativeOrder()).getLong(8 * (int) wc.wrId()));
            }
            assertEquals(messages, receives.size(), "a receive completed twice");
            assertEquals(messages, delivered.size(), "a send landed twice, or none did");
            for (WorkCompletion wc : poll(loop.a.cq, messages - completed)) {
                assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
            }
            assertNoCompletion(loop.b.cq);
        } finally {
            posters.shutdownNow();
        }
    }

    @Test
    void receivesPostedWhileTheQpEntersErrEachCompleteOnce() throws Exception {
        int receives = POSTERS * PER_POSTER;
        ExecutorService posters = Executors.newFixedThreadPool(POSTERS);
        try (Loopback loop = loopback().depths(16, receives).cqe(2 * receives).open()) {
            MemoryRegion in = loop.b.register(8);
            CountDownLatch halfway = new CountDownLatch(POSTERS);
            Future<?>[] posting = new Future<?>[POSTERS];
            for (int t = 0; t < POSTERS; t++) {
                int first = t * PER_POSTER;
                posting[t] = posters.submit(() -> {
                    for (int i = first; i < first + PER_POSTER; i++) {
                        loop.b.qp.postReceive(ReceiveWorkRequest.of(i, in.sge()));
                        if (i == first + PER_POSTER / 2) {
                            halfway.countDown();
                        }
                    }
                    return null;
                });
            }
            halfway.await(STEP.toSeconds(), TimeUnit.SECONDS);
            loop.b.qp.modify(QpAttributes.of().state(QpState.ERR));
            for (Future<?> f : posting) {
                f.get(STEP.toSeconds(), TimeUnit.SECONDS);
            }
            Set<Long> flushed = new HashSet<>();
            for (WorkCompletion wc : poll(loop.b.cq, receives)) {
                assertEquals(WcStatus.WR_FLUSH_ERR, wc.status(), wc.toString());
                flushed.add(wc.wrId());
            }
            assertEquals(receives, flushed.size(), "a receive was flushed twice");
            assertNoCompletion(loop.b.cq);
        } finally {
            posters.shutdownNow();
        }
    }
}
