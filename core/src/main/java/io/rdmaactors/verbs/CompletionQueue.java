package io.rdmaactors.verbs;

/** A completion queue ({@code ibv_cq}). */
public interface CompletionQueue extends AutoCloseable {

    /** The handle async events ({@code CqEvent}) name this CQ by. */
    long handle();

    int capacity();

    /**
     * Moves up to {@code out.length} completions into {@code out}, oldest first
     * ({@code ibv_poll_cq}).
     *
     * @return how many were written
     */
    int poll(WorkCompletion[] out);

    /**
     * Arms the CQ: the next completion, or with {@code solicitedOnly} the next solicited receive
     * or error completion, fires one event on its channel ({@code ibv_req_notify_cq}).
     */
    void requestNotify(boolean solicitedOnly);

    /** Acknowledges {@code count} channel events for this CQ ({@code ibv_ack_cq_events}). */
    void ackEvents(int count);

    CompletionChannel channel();

    /**
     * Whether an empty poll does work the CQ's next completion may wait for: the soft fabric reads
     * the links to other processes that the CQ's connections run on, and carries what its wire
     * between QPs of one JVM holds, on the polling thread. A
     * consumer then takes completions sooner by polling on than by awaiting their event, even
     * where events reach it without waking a thread. False for a device's CQ.
     */
    default boolean pollProgresses() {
        return false;
    }

    /** Fails with {@link ResourceBusyException} while a QP uses it or events are unacknowledged. */
    @Override
    void close();
}
