package io.rdmaactors.actors;

import static io.rdmaactors.actors.Connections.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaactors.actors.RdmaProtocol.ConnectionEvent;
import io.rdmaactors.cm.EventPump;
import io.rdmaactors.testkit.RdmaTestKit;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The completion path's promises: threads do not grow with connections, the CQs sharing a channel
 * lose no wake-up, a CQ destroyed while others keep its channel busy leaves nothing unacked, and
 * an idle process sleeps.
 */
class CompletionPollerTest {

    /** Small queues and buffers: these tests are about counts, not bytes. */
    private static final String SMALL = "rdma-actors.send-queue-depth = 8\nrdma-actors.receive-queue-depth = 8\n"
            + "rdma-actors.buffer-size = 64\n";
    /** No polling after completions: every one must come through an armed CQ and its channel. */
    private static final String NO_SPIN = "rdma-actors.completion-spin = 0\nrdma-actors.completion-yield = 0\n";

    private RdmaTestKit kit;

    @AfterEach
    void stop() {
        if (kit != null) {
            kit.close();
        }
    }

    @Test
    void threadsAreTheSameWithTenAndFiveHundredConnections() {
        kit = RdmaTestKit.create(SMALL);
        RdmaTestKit.Listener listener = kit.listen(600);
        List<RdmaTestKit.Pair> pairs = connect(listener, 10);
        exchangeOneMessageEach(pairs); // threads that start with the first message (the soft wire) are up
        List<String> withTen = kit.threads();
        pairs.addAll(connect(listener, 490));
        exchangeOneMessageEach(pairs);
        List<String> withFiveHundred = kit.threads();
        assertEquals(withTen.size(), withFiveHundred.size(),
                "rdma-actors threads with 10 connections " + withTen + ", with 500 " + withFiveHundred);
        long verbsCalls = Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().contains("rdma-actors.verbs-calls")).count();
        assertTrue(verbsCalls <= 4, verbsCalls + " verbs-calls threads, the pool holds 4");
        pairs.forEach(p -> kit.close(p));
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void manyCqsCompletingAtOnceOnOneChannelLoseNoWakeUp() {
        kit = RdmaTestKit.create(SMALL + NO_SPIN + "rdma-actors.completion-pollers = 1");
        RdmaTestKit.Listener listener = kit.listen(300);
        List<RdmaTestKit.Pair> pairs = connect(listener, 200);
        for (int round = 0; round < 5; round++) {
            exchangeOneMessageEach(pairs);
        }
        pairs.forEach(p -> kit.close(p));
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void aSpinThatOnlyYieldsStillTakesEveryCompletionAndReArms() {
        // no busy spin; a yielding one, for connections awaiting answers, long enough to cover
        // several messages, then the CQ is re-armed. Only the device's few spin turns spin at
        // once, and each comes back, also from a connection that closes while yielding.
        kit = RdmaTestKit.create(SMALL + "rdma-actors.completion-spin = 0\nrdma-actors.completion-yield = 200ms");
        RdmaTestKit.Listener listener = kit.listen(100);
        List<RdmaTestKit.Pair> pairs = connect(listener, 20);
        for (int round = 0; round < 4; round++) {
            exchangeWithAnswers(pairs);
            // past the yield: the next round must come through re-armed CQs. Meanwhile at most the
            // device's spin turns are held; those without one re-armed at once.
            assertAtMostTheSpinTurnsHeldFor(300);
        }
        // twenty connections awaiting answers keep the cores busy and may spin not at all; one
        // alone spins (within a few round trips, once the others' wake-ups lie behind it; more
        // under an emulated CPU, as in the Soft-RoCE guest)
        List<RdmaTestKit.Pair> lone = pairs.subList(0, 1);
        int mostHeld = 0;
        for (int round = 0; round < 30 && mostHeld == 0; round++) {
            exchangeWithAnswers(lone);
            mostHeld = assertAtMostTheSpinTurnsHeldFor(50);
        }
        assertTrue(mostHeld > 0, "a lone connection awaiting answers never spun");
        exchangeWithAnswers(pairs); // the connections close while one may still yield: its turn must come back
        closeAndAwaitSpinTurnsBack(listener, pairs);
    }

    @Test
    void inLatencyModeEveryMessageArrivesAndEverySpinTurnComesBack() {
        kit = RdmaTestKit.create(SMALL + "rdma-actors.wait = spin");
        RdmaTestKit.Listener listener = kit.listen(100);
        List<RdmaTestKit.Pair> pairs = connect(listener, 20);
        for (int round = 0; round < 5; round++) {
            exchangeOneMessageEach(pairs);
            int held = CompletionPoller.spinTurnsHeld();
            assertTrue(held <= CompletionPoller.SPIN_TURNS, held + " spin turns held");
        }
        closeAndAwaitSpinTurnsBack(listener, pairs);
    }

    @Test
    void cqsDestroyedWhileTheirChannelServesOthersLeaveNothingUnacked() {
        kit = RdmaTestKit.create(SMALL + NO_SPIN);
        RdmaTestKit.Listener listener = kit.listen(100);
        List<RdmaTestKit.Pair> pairs = connect(listener, 40);
        int messages = 200;
        for (int n = 0; n < messages; n++) {
            for (RdmaTestKit.Pair p : pairs) {
                p.client().tell(RdmaProtocol.Send.of(new byte[] {(byte) n}, n));
            }
            if (n == messages / 2) {
                // half of the connections go while every CQ on the channel is busy
                for (int c = 0; c < pairs.size(); c += 2) {
                    pairs.get(c).client().tell(new RdmaProtocol.Abort());
                }
            }
        }
        for (int c = 0; c < pairs.size(); c++) {
            RdmaTestKit.Pair p = pairs.get(c);
            Set<Object> answered = new HashSet<>();
            int acked = 0;
            // commands that reach an aborted connection after it stopped are answered after its Disconnected
            boolean disconnected = false;
            while (answered.size() < messages) {
                ConnectionEvent e;
                try {
                    e = p.clientEvents().receiveMessage(WAIT);
                } catch (AssertionError timeout) {
                    throw new AssertionError("connection " + c + (c % 2 == 0 ? " (aborted)" : "") + ": "
                            + answered.size() + " of " + messages + " sends answered, " + acked + " acked", timeout);
                }
                disconnected |= e instanceof RdmaProtocol.Disconnected;
                if (e instanceof RdmaProtocol.Acked a) {
                    acked++;
                    assertTrue(answered.add(a.token()), "answered twice: " + a.token());
                } else if (e instanceof RdmaProtocol.CommandFailed f) {
                    assertTrue(answered.add(((RdmaProtocol.Send) f.command()).ack()), "answered twice: " + f);
                }
            }
            assertTrue(c % 2 == 0 || acked > 0, "connection " + c + " carried nothing");
            if (c % 2 == 0) {
                if (!disconnected) {
                    RdmaTestKit.awaitDisconnected(p.clientEvents());
                }
                RdmaTestKit.awaitDisconnected(p.serverEvents());
            }
        }
        for (int c = 1; c < pairs.size(); c += 2) {
            kit.close(pairs.get(c));
        }
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void anIdleProcessMakesNoWakeUps() throws InterruptedException {
        kit = RdmaTestKit.create(SMALL);
        RdmaTestKit.Listener listener = kit.listen(20);
        List<RdmaTestKit.Pair> pairs = connect(listener, 10);
        exchangeOneMessageEach(pairs);
        Thread.sleep(300); // the last completions' spin and acks settle
        long polls = CompletionPoller.wakeUps();
        long pumps = EventPump.wakeUps();
        Thread.sleep(1_500); // three times the wait slice the pumps once woke up after
        assertEquals(polls, CompletionPoller.wakeUps(), "completion poller wake-ups while idle");
        assertEquals(pumps, EventPump.wakeUps(), "CM and async event pump wake-ups while idle");
        pairs.forEach(p -> kit.close(p));
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void onTheSoftFabricCompletionsReachTheirActorWithNoPollerThreadWaking() {
        kit = RdmaTestKit.create(SMALL + NO_SPIN);
        Assumptions.assumeTrue(kit.fabric().provider().equals("soft"), "rdma-core's events come from the kernel");
        RdmaTestKit.Listener listener = kit.listen(20);
        List<RdmaTestKit.Pair> pairs = connect(listener, 10);
        long polls = CompletionPoller.wakeUps();
        for (int round = 0; round < 5; round++) {
            exchangeOneMessageEach(pairs);
        }
        assertEquals(polls, CompletionPoller.wakeUps(),
                "the fabric that raised each completion handed it to the poller's routing itself");
        pairs.forEach(p -> kit.close(p));
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    private List<RdmaTestKit.Pair> connect(RdmaTestKit.Listener listener, int count) {
        List<RdmaTestKit.Pair> pairs = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            pairs.add(kit.connect(listener));
        }
        return pairs;
    }

    /** Closes every pair and the listener; every spin turn the connections held must come back. */
    private void closeAndAwaitSpinTurnsBack(RdmaTestKit.Listener listener, List<RdmaTestKit.Pair> pairs) {
        pairs.forEach(p -> kit.close(p));
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (CompletionPoller.spinTurnsHeld() > 0 && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertEquals(0, CompletionPoller.spinTurnsHeld(), "spin turns kept by stopped connections");
    }

    /** A message each way on every pair: from the second round on, each client send awaits an answer. */
    private static void exchangeWithAnswers(List<RdmaTestKit.Pair> pairs) {
        exchangeOneMessageEach(pairs);
        for (int c = 0; c < pairs.size(); c++) {
            pairs.get(c).server().tell(RdmaProtocol.Send.of(ByteBuffer.allocate(4).putInt(c).array(), null));
        }
        for (int c = 0; c < pairs.size(); c++) {
            RdmaProtocol.Received r = assertInstanceOf(RdmaProtocol.Received.class,
                    pairs.get(c).clientEvents().receiveMessage(WAIT));
            assertEquals(c, r.data().asByteBuffer().getInt(), "an answer reached another connection");
        }
    }

    /** Watches the spin turns held for {@code millis}: never more than the device's; the most seen. */
    private static int assertAtMostTheSpinTurnsHeldFor(long millis) {
        int mostHeld = 0;
        long end = System.nanoTime() + millis * 1_000_000;
        while (System.nanoTime() < end) {
            int held = CompletionPoller.spinTurnsHeld();
            assertTrue(held <= CompletionPoller.SPIN_TURNS, held + " spin turns held");
            mostHeld = Math.max(mostHeld, held);
        }
        return mostHeld;
    }

    private static void exchangeOneMessageEach(List<RdmaTestKit.Pair> pairs) {
        for (int c = 0; c < pairs.size(); c++) {
            pairs.get(c).client().tell(RdmaProtocol.Send.of(ByteBuffer.allocate(4).putInt(c).array(), c));
        }
        for (int c = 0; c < pairs.size(); c++) {
            RdmaProtocol.Received r = assertInstanceOf(RdmaProtocol.Received.class,
                    pairs.get(c).serverEvents().receiveMessage(WAIT));
            assertEquals(c, r.data().asByteBuffer().getInt(), "a message reached another connection");
            assertInstanceOf(RdmaProtocol.Acked.class, pairs.get(c).clientEvents().receiveMessage(WAIT));
        }
    }
}
