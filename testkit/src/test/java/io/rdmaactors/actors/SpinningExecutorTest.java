package io.rdmaactors.actors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The data path's executor: every task runs once however it was submitted, a worker's own in the
 * order it submitted them, a chain of tasks stays on its thread, a worker sees what waits on it,
 * a backlog is shared, an idle executor parks all its threads, and shutdown ends them; a data path
 * actor runs on its handler's dispatcher.
 */
class SpinningExecutorTest {

    private final List<Thread> threads = new ArrayList<>();
    private final ThreadFactory factory = r -> {
        Thread t = new Thread(r, "spinning-test-" + threads.size());
        threads.add(t);
        return t;
    };
    private SpinningExecutor executor;

    @AfterEach
    void stop() throws InterruptedException {
        if (executor != null) {
            executor.shutdownNow();
            assertTrue(executor.awaitTermination(10, TimeUnit.SECONDS));
        }
    }

    @Test
    void everyTaskRunsOnceFromOutsideAndFromItsOwnThreads() throws Exception {
        executor = new SpinningExecutor(3, Duration.ofMillis(1), 1, factory);
        int submitters = 4;
        int perSubmitter = 20_000;
        AtomicInteger ran = new AtomicInteger();
        CountDownLatch done = new CountDownLatch(submitters * perSubmitter * 2);
        List<Thread> outside = new ArrayList<>();
        for (int s = 0; s < submitters; s++) {
            Thread t = new Thread(() -> {
                for (int i = 0; i < perSubmitter; i++) {
                    executor.execute(() -> {
                        ran.incrementAndGet();
                        done.countDown();
                        // a follow-up from a worker goes to its own queue
                        executor.execute(() -> {
                            ran.incrementAndGet();
                            done.countDown();
                        });
                    });
                    if (i % 1000 == 0) {
                        // lets the workers park now and then, so wake-ups are exercised too
                        sleep(2);
                    }
                }
            });
            outside.add(t);
            t.start();
        }
        for (Thread t : outside) {
            t.join();
        }
        assertTrue(done.await(30, TimeUnit.SECONDS), "tasks left: " + done.getCount());
        Thread.sleep(50);
        assertEquals(submitters * perSubmitter * 2, ran.get());
    }

    @Test
    void aChainOfTasksStaysOnTheThreadThatRunsIt() throws Exception {
        executor = new SpinningExecutor(2, Duration.ofMillis(5), 2, factory);
        Set<String> ranOn = ConcurrentHashMap.newKeySet();
        CountDownLatch done = new CountDownLatch(1);
        executor.execute(new Runnable() {
            int left = 10_000;

            @Override
            public void run() {
                ranOn.add(Thread.currentThread().getName());
                if (--left > 0) {
                    executor.execute(this);
                } else {
                    done.countDown();
                }
            }
        });
        assertTrue(done.await(30, TimeUnit.SECONDS));
        assertEquals(1, ranOn.size(), "each task handed on to the next on its own thread: " + ranOn);
    }

    @Test
    void tasksAWorkerSubmitsRunInTheOrderItSubmittedThem() throws Exception {
        executor = new SpinningExecutor(1, Duration.ofMillis(1), 1, factory);
        List<String> order = new ArrayList<>();
        CountDownLatch done = new CountDownLatch(1);
        executor.execute(() -> {
            // a runs next; b and c queue behind it; d, submitted while b runs, after c
            executor.execute(() -> order.add("a"));
            executor.execute(() -> {
                order.add("b");
                executor.execute(() -> {
                    order.add("d");
                    done.countDown();
                });
            });
            executor.execute(() -> order.add("c"));
        });
        assertTrue(done.await(10, TimeUnit.SECONDS));
        assertEquals(List.of("a", "b", "c", "d"), order);
    }

    @Test
    void aTaskRunAfterTheQueuedOnesRunsLastOnItsThreadAndNoOtherTakesIt() throws Exception {
        // two threads that both may spin: the one out of work takes what it can
        executor = new SpinningExecutor(2, Duration.ofMillis(5), 2, factory);
        assertFalse(SpinningExecutor.runAfterQueued(() -> { }), "off the executor's threads nothing is taken");
        for (int i = 0; i < 200; i++) {
            List<String> ranOn = Collections.synchronizedList(new ArrayList<>());
            // b or c may run on the other thread, as late as a slow machine lets it
            CountDownLatch done = new CountDownLatch(4);
            AtomicBoolean taken = new AtomicBoolean();
            executor.execute(() -> {
                String submitter = Thread.currentThread().getName();
                executor.execute(() -> {
                    sleep(1); // the other thread meanwhile looks for work
                    ranOn.add("a");
                    done.countDown();
                });
                executor.execute(() -> {
                    ranOn.add("b");
                    done.countDown();
                });
                taken.set(SpinningExecutor.runAfterQueued(() -> {
                    ranOn.add(Thread.currentThread().getName().equals(submitter) ? "after, here" : "after, elsewhere");
                    done.countDown();
                }));
                executor.execute(() -> {
                    ranOn.add("c");
                    done.countDown();
                });
            });
            assertTrue(done.await(10, TimeUnit.SECONDS), "taken on a worker thread: " + taken + ", ran: " + ranOn);
            assertEquals(4, ranOn.size(), ranOn.toString());
            assertTrue(ranOn.contains("after, here"), "only the submitting thread runs it: " + ranOn);
            assertTrue(ranOn.indexOf("a") < ranOn.indexOf("after, here"), "after what it queued: " + ranOn);
        }
    }

    @Test
    void aWorkerSeesTheTasksWaitingToRunOnItsThread() throws Exception {
        // one thread: nobody takes what waits on it
        executor = new SpinningExecutor(1, Duration.ZERO, 0, factory);
        assertFalse(SpinningExecutor.workWaiting(), "off the executor's threads nothing waits");
        List<Boolean> seen = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch done = new CountDownLatch(1);
        executor.execute(() -> {
            seen.add(SpinningExecutor.workWaiting());
            executor.execute(() -> {
                seen.add(SpinningExecutor.workWaiting());
                done.countDown();
            });
            seen.add(SpinningExecutor.workWaiting());
        });
        await(done);
        assertEquals(List.of(false, true, false), seen, "nothing, the task it submitted, nothing once that ran");
    }

    @Test
    void aBacklogIsSharedWithAnotherThread() throws Exception {
        executor = new SpinningExecutor(2, Duration.ZERO, 1, factory);
        Set<String> ranOn = ConcurrentHashMap.newKeySet();
        CountDownLatch done = new CountDownLatch(4);
        executor.execute(() -> {
            for (int i = 0; i < 4; i++) {
                executor.execute(() -> {
                    ranOn.add(Thread.currentThread().getName());
                    sleep(50);
                    done.countDown();
                });
            }
        });
        assertTrue(done.await(30, TimeUnit.SECONDS));
        assertEquals(2, ranOn.size(), "four slow tasks queued by one thread ran on both: " + ranOn);
    }

    @Test
    void oneTaskBehindTheNextWakesNoOtherThread() throws Exception {
        // nobody spins: a thread runs only if woken
        executor = new SpinningExecutor(2, Duration.ZERO, 2, factory);
        for (int i = 0; i < 20; i++) {
            awaitAllParked();
            List<String> ranOn = Collections.synchronizedList(new ArrayList<>());
            CountDownLatch done = new CountDownLatch(2);
            executor.execute(() -> {
                executor.execute(() -> {
                    sleep(5); // a woken thread would take what waits behind this
                    ranOn.add(Thread.currentThread().getName());
                    done.countDown();
                });
                executor.execute(() -> {
                    ranOn.add(Thread.currentThread().getName());
                    done.countDown();
                });
            });
            assertTrue(done.await(10, TimeUnit.SECONDS));
            assertEquals(1, Set.copyOf(ranOn).size(), "a conversation stays on its thread: " + ranOn);
        }
    }

    @Test
    void anIdleExecutorParksEveryThread() throws Exception {
        executor = new SpinningExecutor(2, Duration.ofMillis(20), 2, factory);
        CountDownLatch done = new CountDownLatch(1000);
        for (int i = 0; i < 1000; i++) {
            executor.execute(done::countDown);
        }
        assertTrue(done.await(10, TimeUnit.SECONDS));
        awaitAllParked();
        // and a task still wakes one
        CountDownLatch again = new CountDownLatch(1);
        executor.execute(again::countDown);
        assertTrue(again.await(10, TimeUnit.SECONDS));
    }

    @Test
    void shutdownRunsWhatWasQueuedThenEndsTheThreads() throws Exception {
        executor = new SpinningExecutor(1, Duration.ZERO, 1, factory);
        CountDownLatch gate = new CountDownLatch(1);
        AtomicInteger ran = new AtomicInteger();
        executor.execute(() -> {
            await(gate);
            ran.incrementAndGet();
        });
        executor.execute(ran::incrementAndGet);
        executor.shutdown();
        assertThrows(RejectedExecutionException.class, () -> executor.execute(ran::incrementAndGet));
        gate.countDown();
        assertTrue(executor.awaitTermination(10, TimeUnit.SECONDS));
        assertTrue(executor.isTerminated());
        assertEquals(2, ran.get());
        for (Thread t : threads) {
            t.join(1000);
            assertTrue(!t.isAlive(), t.getName() + " ended");
        }
    }

    @Test
    void aDataPathActorRunsOnTheDispatcherOfItsHandler() {
        ActorTestKit testKit = ActorTestKit.create(ConfigFactory.load());
        try {
            RdmaSettings settings = RdmaSettings.from(testKit.system().settings().config());
            ActorRef<Object> plain = testKit.spawn(Behaviors.empty(), "plain");
            ActorRef<Object> onDataPath = testKit.spawn(Behaviors.empty(), "on-data-path",
                    Rdma.get(testKit.system()).dispatcher());
            assertTrue(threadOf(testKit, settings.dataPath(plain)).contains("pekko.actor.default-dispatcher"));
            assertTrue(threadOf(testKit, settings.dataPath(onDataPath)).contains(RdmaSettings.DATA_PATH_DISPATCHER));
            // a system actor's too (a library's handler, or a benchmark's)
            ActorRef<Object> systemOnDataPath = testKit.system().systemActorOf(Behaviors.empty(), "system-on-data-path",
                    Rdma.get(testKit.system()).dispatcher());
            assertTrue(threadOf(testKit, settings.dataPath(systemOnDataPath)).contains(RdmaSettings.DATA_PATH_DISPATCHER));
        } finally {
            testKit.shutdownTestKit();
        }
    }

    /** The name of the thread an actor spawned with {@code props} runs on. */
    private static String threadOf(ActorTestKit testKit, Props props) {
        TestProbe<String> probe = testKit.createTestProbe();
        testKit.spawn(Behaviors.setup(ctx -> {
            probe.ref().tell(Thread.currentThread().getName());
            return Behaviors.empty();
        }), props);
        return probe.receiveMessage();
    }

    /** Waits until every thread of the executor is parked. */
    private void awaitAllParked() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!threads.stream().allMatch(t -> t.getState() == Thread.State.WAITING)) {
            assertTrue(System.nanoTime() < deadline, "threads still running: "
                    + threads.stream().map(t -> t.getName() + " " + t.getState()).toList());
            Thread.sleep(10);
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
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
