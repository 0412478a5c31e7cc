package io.rdmaactors.verbs;

import io.rdmaactors.cm.EventSource;

/**
 * A completion channel ({@code ibv_comp_channel}): {@link #await} returns the CQ that fired, once per
 * armed notification. Each event must be acknowledged with {@link CompletionQueue#ackEvents}
 * before the CQ can be destroyed.
 */
public interface CompletionChannel extends EventSource<CompletionQueue>, AutoCloseable {

    /** Fails with {@link ResourceBusyException} while a CQ uses the channel. */
    @Override
    void close();
}
