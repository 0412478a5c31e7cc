package io.rdmaactors.verbs;

import io.rdmaactors.cm.EventSource;
import java.util.function.Consumer;

/**
 * A completion channel ({@code ibv_comp_channel}): {@link #await} returns the CQ that fired, once per
 * armed notification. Each event must be acknowledged with {@link CompletionQueue#ackEvents}
 * before the CQ can be destroyed.
 */
public interface CompletionChannel extends EventSource<CompletionQueue>, AutoCloseable {

    /**
     * Has every later event call {@code handler} on the thread that raises it, instead of waking a
     * thread in {@link #await}, where the provider raises events in this process (the soft
     * fabric's completions come from its I/O thread or the poster, not from a kernel); false where
     * events can only be awaited. The handler must not block. Each event is still acknowledged.
     */
    default boolean deliverTo(Consumer<CompletionQueue> handler) {
        return false;
    }

    /** Fails with {@link ResourceBusyException} while a CQ uses the channel. */
    @Override
    void close();
}
