package io.rdmaactors.examples;

import io.rdmaactors.cm.CmEvent;
import io.rdmaactors.verbs.EventChannel;
import java.time.Duration;

/** Waits for the next CM event of an expected kind, as the rdma-core examples' get_cm_event loops do. */
final class CmEvents {

    private CmEvents() {
    }

    static <E extends CmEvent> E expect(EventChannel channel, Class<E> kind, Duration timeout) throws Exception {
        CmEvent event = channel.await(timeout);
        if (event == null) {
            throw new IllegalStateException("no " + kind.getSimpleName() + " within " + timeout);
        }
        if (!kind.isInstance(event)) {
            throw new IllegalStateException("expected " + kind.getSimpleName() + ", got " + event);
        }
        return kind.cast(event);
    }
}
