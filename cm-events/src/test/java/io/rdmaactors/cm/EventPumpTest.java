package io.rdmaactors.cm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class EventPumpTest {

    private static final long STEP_MS = 2000;

    /**
     * A source backed by a queue. A wait ignores its timeout and ends only on an event or a wakeup,
     * so a pump that did not wake it could not stop promptly.
     */
    private static final class QueueSource implements EventSource<String> {
        private static final Object WAKEUP = new Object();
        private final BlockingQueue<Object> queue = new LinkedBlockingQueue<>();
        private final AtomicInteger awaits = new AtomicInteger();
        private volatile Exception failure;

        void offer(String event) {
            queue.add(event);
        }

        /** From the next wait on, every wait throws. */
        void fail(Exception e) {
            failure = e;
            queue.add(WAKEUP);
        }

        @Override
        public String await(Duration timeout) throws Exception {
            awaits.incrementAndGet();
            if (failure != null) {
                throw failure;
            }
            Object next = queue.take();
            if (failure != null) {
                throw failure;
            }
            return next == WAKEUP ? null : (String) next;
        }

        /** An event that comes just as a wakeup does, and so is taken instead of it. */
        volatile String withWakeup;

        @Override
        public void wakeup() {
            String event = withWakeup;
            if (event != null) {
                queue.add(event);
            }
            queue.add(WAKEUP);
        }
    }

    private final QueueSource source = new QueueSource();
    private final BlockingQueue<String> delivered = new LinkedBlockingQueue<>();
    private final BlockingQueue<Thread> deliveringThreads = new LinkedBlockingQueue<>();
    private EventPump<String> pump;

    private EventPump<String> start(String name) {
        pump = EventPump.start(name, source, e -> {
            deliveringThreads.add(Thread.currentThread());
            delivered.add(e);
        }, t -> "failed: " + t.getMessage());
        return pump;
    }

    private String next() throws InterruptedException {
        String e = delivered.poll(STEP_MS, TimeUnit.MILLISECONDS);
        assertNotNull(e, "no event delivered");
        return e;
    }

    @AfterEach
    void stopPump() {
        if (pump != null) {
            assertTimeoutPreemptively(Duration.ofSeconds(2), pump::close);
        }
    }

    @Test
    void deliversEveryEventInOrder() throws Exception {
        start("pump-order");
        List<String> sent = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            sent.add("e" + i);
            source.offer("e" + i);
        }
        List<String> got = new ArrayList<>();
        for (int i = 0; i < sent.size(); i++) {
            got.add(next());
        }
        assertEquals(sent, got);
        assertNull(delivered.poll(50, TimeUnit.MILLISECONDS), "an event delivered twice");
    }

    @Test
    void runsOnANamedDaemonThread() throws Exception {
        start("rdma-test-pump");
        assertEquals("rdma-test-pump", pump.name());
        source.offer("e");
        assertEquals("e", next());
        Thread thread = deliveringThreads.take();
        assertEquals("rdma-test-pump", thread.getName());
        assertTrue(thread.isDaemon(), "a pump must not keep the JVM alive");
        assertTrue(pump.isRunning());
    }

    @Test
    void closeWakesTheSourceAndEndsTheThreadPromptly() throws Exception {
        start("pump-close");
        source.offer("e");
        assertEquals("e", next());
        Thread thread = deliveringThreads.take();
        // the pump is now blocked in a wait that only a wakeup ends
        Thread.sleep(20);
        long started = System.nanoTime();
        assertTimeoutPreemptively(Duration.ofSeconds(2), pump::close);
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        assertTrue(tookMs < 250, "close took " + tookMs + " ms: the wakeup did not end the wait");
        assertFalse(thread.isAlive(), "the pump's thread outlived close");
        assertFalse(pump.isRunning());
        source.offer("late");
        assertNull(delivered.poll(50, TimeUnit.MILLISECONDS), "an event delivered after close");
    }

    /** An event the pump took from its source as close() began is in no queue any more: it is delivered, not dropped. */
    @Test
    void anEventTakenAsTheCloseBeginsIsStillDelivered() throws Exception {
        source.withWakeup = "raced";
        start("pump-race");
        Thread.sleep(20); // blocked in a wait
        assertTimeoutPreemptively(Duration.ofSeconds(2), pump::close);
        assertEquals("raced", delivered.poll(0, TimeUnit.MILLISECONDS));
    }

    @Test
    void failingSourceDeliversOneFailureAndStops() throws Exception {
        start("pump-fail");
        source.offer("before");
        assertEquals("before", next());
        Thread thread = deliveringThreads.take();
        source.fail(new IOException("channel gone"));
        assertEquals("failed: channel gone", next());
        thread.join(STEP_MS);
        assertFalse(thread.isAlive(), "the pump kept running after its source failed");
        assertFalse(pump.isRunning());
        assertNull(delivered.poll(100, TimeUnit.MILLISECONDS), "more than one event after the failure");
        int awaits = source.awaits.get();
        Thread.sleep(50);
        assertEquals(awaits, source.awaits.get(), "the pump kept reading a failed source");
    }
}
