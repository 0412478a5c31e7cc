package io.rdmaactors.jna;

/**
 * A QP's send queue as the application sees it: a send holds its slot until its completion, or a
 * later signaled one, is polled, the way hardware providers count. rxe frees a slot as soon as the
 * kernel finishes the request and rounds the queue up, so without this a full queue would depend on
 * the device; with it every provider refuses at the capacity {@code initAttributes()} reports.
 * Error completions carry no opcode, so a send cannot be told from a receive: after the first
 * one the QP is in ERR (or SQE), everything outstanding is being flushed, and the device's own
 * limit governs until the QP is reset (or back in RTS).
 */
final class SendQueueSlots {

    private final boolean[] signaled;
    private int head;
    private int count;
    private boolean counting = true;

    SendQueueSlots(int capacity) {
        signaled = new boolean[Math.max(1, capacity)];
    }

    /** How many of {@code wanted} sends fit now. */
    synchronized int free(int wanted) {
        return counting ? Math.min(wanted, signaled.length - count) : wanted;
    }

    synchronized void posted(boolean isSignaled) {
        if (counting) {
            signaled[(head + count) % signaled.length] = isSignaled;
            count++;
        }
    }

    /** A successful send completion retires the sends up to and including the first signaled one. */
    synchronized void completed() {
        while (count > 0) {
            boolean last = signaled[head];
            head = (head + 1) % signaled.length;
            count--;
            if (last) {
                return;
            }
        }
    }

    /** The QP entered ERR (an error completion, or modified there). */
    synchronized void failed() {
        counting = false;
        count = 0;
    }

    /** The QP went back to RTS from SQE (UD): what was outstanding has been flushed. */
    synchronized void recovered() {
        if (!counting) {
            reset();
        }
    }

    /** The QP was reset: its queues are empty. */
    synchronized void reset() {
        counting = true;
        head = 0;
        count = 0;
    }
}
