package io.rdmaactors.actors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaactors.actors.CompletionWait.Step;
import org.junit.jupiter.api.Test;

/** The QP actor's wait for completions, decided without an actor or a clock of its own. */
class CompletionWaitTest {

    private static final long SPIN = 20_000;
    private static final long YIELD = 80_000;

    @Test
    void aSpinPollsBusyThenYieldsOnlyWhileAnAnswerIsAwaitedThenReArms() {
        CompletionWait wait = new CompletionWait(SPIN, YIELD);
        assertFalse(wait.skipsSpin());
        wait.begin(0);
        assertEquals(Step.POLL, wait.next(SPIN - 1, true));
        assertEquals(Step.YIELD_THEN_POLL, wait.next(SPIN, true));
        assertEquals(Step.REARM, wait.next(SPIN, false), "a stream's end, awaiting nothing, does not yield");
        assertEquals(Step.REARM, wait.next(SPIN + YIELD, true));
        wait.found(SPIN + YIELD);
        assertEquals(Step.POLL, wait.next(SPIN + YIELD + 1, true), "a completion found starts the spin anew");
    }

    @Test
    void aRequestPostedDuringTheSpinStartsItsBusyPartAgain() {
        CompletionWait wait = new CompletionWait(SPIN, YIELD);
        wait.begin(0);
        wait.found(10);
        assertEquals(Step.YIELD_THEN_POLL, wait.next(10 + SPIN, true));
        wait.posted(10 + SPIN);
        assertEquals(Step.POLL, wait.next(10 + SPIN + 1, true), "the answer to what just went out is awaited busy");
        assertEquals(Step.YIELD_THEN_POLL, wait.next(10 + 2 * SPIN, true));
        wait.posted(5);
        assertEquals(Step.YIELD_THEN_POLL, wait.next(10 + 2 * SPIN, true), "an earlier post does not move it back");
        assertEquals(Step.REARM, wait.next(10 + 2 * SPIN + YIELD, true));
    }

    @Test
    void spinsThatFindNothingMakeTwiceAsManyWakeUpsSkipTheirsAndOneThatFindsClearsThem() {
        CompletionWait wait = new CompletionWait(SPIN, YIELD);
        for (int expected : new int[] {1, 3, 7}) {
            wait.begin(0);
            wait.end();
            for (int i = 0; i < expected; i++) {
                assertTrue(wait.skipsSpin(), "skip " + i + " of " + expected);
            }
            assertFalse(wait.skipsSpin());
        }
        wait.begin(0);
        wait.found(5);
        wait.end();
        assertFalse(wait.skipsSpin(), "a spin that found something clears the skips");
        wait.begin(0);
        wait.end();
        assertTrue(wait.skipsSpin());
        assertFalse(wait.skipsSpin(), "and starts the doubling over");
    }

    @Test
    void aSpinThatGaveWayToOtherConnectionsCountsAsOneThatFoundNothing() {
        CompletionWait wait = new CompletionWait(SPIN, YIELD);
        assertTrue(wait.givesWay());
        wait.begin(0);
        wait.found(5);
        wait.gaveWay();
        assertTrue(wait.skipsSpin(), "what it found does not spare the next wake-up its skip");
        assertFalse(wait.skipsSpin());
        assertFalse(CompletionWait.latency().givesWay(), "latency mode spins whoever else waits");
    }

    @Test
    void latencyModePollsBusyWhateverItAwaitsAndAMissedSpinSparesNoLaterOne() {
        CompletionWait wait = CompletionWait.latency();
        long spin = CompletionWait.LATENCY_SPIN_NANOS;
        for (int round = 0; round < 3; round++) {
            assertFalse(wait.skipsSpin(), "round " + round);
            wait.begin(0);
            assertEquals(Step.POLL, wait.next(spin - 1, false), "a stream's end polls on too");
            assertEquals(Step.REARM, wait.next(spin, true), "and never yields");
            wait.end(); // found nothing
        }
    }

    @Test
    void noWaitSkipsEverySpinAndASpinThatTookNoTimeProvesNothing() {
        assertTrue(new CompletionWait(0, 0).skipsSpin());
        CompletionWait yieldOnly = new CompletionWait(0, YIELD);
        yieldOnly.begin(0);
        assertEquals(Step.REARM, yieldOnly.next(0, false));
        yieldOnly.end();
        assertFalse(yieldOnly.skipsSpin(), "no busy part and nothing awaited: no reason to skip the next");
    }
}
