package io.rdmaactors.cm;

import java.time.Duration;

/**
 * A blocking source of events: an RDMA CM event channel, a completion channel, a device's async
 * event queue. One thread waits in {@link #await}; any thread may {@link #wakeup} it.
 */
public interface EventSource<E> {

    /**
     * Waits up to {@code timeout} for the next event.
     *
     * @return the event, or null when the wait timed out or was woken up
     * @throws Exception when the source failed; it will deliver nothing more
     */
    E await(Duration timeout) throws Exception;

    /** Makes a thread blocked in {@link #await} return promptly. */
    void wakeup();
}
