package io.rdmaactors.actors;

/**
 * How a QP actor waits for its next completion after it took some: it polls on for {@code spin}
 * (from the last completion found, or from a request it posted meanwhile while awaiting an answer:
 * the handler's turn before the request does not use up the wait for its answer), then, while an
 * answer to what it sent is awaited, for {@code yield} more with a yield of its
 * thread between polls, and then re-arms the CQ and sleeps until the completion channel wakes it.
 * A spin that found nothing only cost CPU (the peer answers slower than the spin), so the next
 * wake-ups skip theirs: 1, 3, 7 ... up to 63 after as many such spins in a row, and none after a
 * spin that found something. The actor polls; this decides. Single-threaded: the actor's.
 */
final class CompletionWait {

    /** What the spin does after a poll. */
    enum Step { POLL, YIELD_THEN_POLL, REARM }

    /** At most 2^6 - 1 wake-ups skip their spin after spins that found nothing. */
    private static final int MAX_SKIP_SHIFT = 6;

    /**
     * How long latency mode ({@code rdma-actors.wait = spin}) polls busy after a completion: longer
     * than a scheduler's time slice, so that a peer descheduled for one does not end the spin. A
     * spin that ends re-arms the CQ, and the next message then takes the link's I/O thread and the
     * completion channel's wake-ups, which delay the peer in turn; at 200 us a ping-pong between
     * two processes on two cores did that several hundred times a second.
     */
    static final long LATENCY_SPIN_NANOS = 2_000_000;

    private final long spinNanos;
    private final long yieldNanos;
    /** Whether spins that found nothing make later wake-ups skip theirs. */
    private final boolean backsOff;
    /** When the spin began, last found a completion or saw a request go out: it lasts spin + yield from then. */
    private long lastFound;
    /** The current spin found a completion. */
    private boolean found;
    /** The current spin had a yielding part. */
    private boolean yielded;
    /** Spins in a row that found nothing, and how many wake-ups go without a spin because of them. */
    private int missedSpins;
    private int toSkip;

    CompletionWait(long spinNanos, long yieldNanos) {
        this(spinNanos, yieldNanos, true);
    }

    private CompletionWait(long spinNanos, long yieldNanos, boolean backsOff) {
        this.spinNanos = spinNanos;
        this.yieldNanos = yieldNanos;
        this.backsOff = backsOff;
    }

    /**
     * Latency mode: polls busy for {@link #LATENCY_SPIN_NANOS} after every completion, whether an
     * answer is awaited or not, and a spin that found nothing does not spare the next one.
     */
    static CompletionWait latency() {
        return new CompletionWait(LATENCY_SPIN_NANOS, 0, false);
    }

    /** Whether this wake-up goes without a spin: there is none to make, or earlier ones found nothing. */
    boolean skipsSpin() {
        if (spinNanos + yieldNanos == 0) {
            return true;
        }
        if (toSkip > 0) {
            toSkip--;
            return true;
        }
        return false;
    }

    /** A spin begins (or, on a wake-up during one, begins again) at {@code now}. */
    void begin(long now) {
        lastFound = now;
        found = false;
        yielded = false;
    }

    /** A poll of the spin found completions. */
    void found(long now) {
        lastFound = now;
        found = true;
    }

    /** A request went out at {@code now}: its answer is what the spin waits for, busy first. */
    void posted(long now) {
        lastFound = Math.max(lastFound, now);
    }

    /** The poll after the re-arm found completions: the spin goes on from {@code now}. */
    void foundAfterRearm(long now) {
        lastFound = now;
    }

    /**
     * After a poll at {@code now}: poll on while the busy part lasts; then yield between polls while
     * an answer is awaited (a stream's two ends, which never await one, would only give their turns
     * away); then re-arm.
     */
    Step next(long now, boolean awaitingAnswer) {
        long waited = now - lastFound;
        if (waited < spinNanos) {
            return Step.POLL;
        }
        if (waited < spinNanos + yieldNanos && awaitingAnswer) {
            yielded = true;
            return Step.YIELD_THEN_POLL;
        }
        return Step.REARM;
    }

    /**
     * Whether a spin gives way to other request-response connections busy on the device: not in
     * latency mode, whose spins are what it is for.
     */
    boolean givesWay() {
        return backsOff;
    }

    /** The spin gave way to other request-response connections: it counts as one that found nothing. */
    void gaveWay() {
        found = false;
        end();
    }

    /**
     * The spin ended with nothing after the re-arm. One that found something clears the skips; one
     * that found nothing doubles them; one that took no time (no busy part, nothing awaited) proves
     * nothing either way.
     */
    void end() {
        if (found) {
            missedSpins = 0;
            toSkip = 0;
        } else if (backsOff && (spinNanos > 0 || yielded)) {
            missedSpins = Math.min(missedSpins + 1, MAX_SKIP_SHIFT);
            toSkip = (1 << missedSpins) - 1;
        }
    }
}
