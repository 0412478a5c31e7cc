package io.rdmaactors.soft;

import io.rdmaactors.verbs.CompletionChannel;
import io.rdmaactors.verbs.CompletionQueue;
import io.rdmaactors.verbs.ResourceBusyException;
import io.rdmaactors.verbs.ResourceKind;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

final class SoftCompletionChannel extends SoftResource implements CompletionChannel {

    final SoftDevice device;
    private final EventQueue<CompletionQueue> events = new EventQueue<>();
    final AtomicInteger users = new AtomicInteger();

    SoftCompletionChannel(SoftDevice device) {
        super(device.fabric, ResourceKind.COMPLETION_CHANNEL);
        this.device = device;
    }

    /** Set once, before any CQ uses the channel: events go to it, not to {@link #await}. */
    private volatile Consumer<CompletionQueue> handler;

    void fire(SoftCompletionQueue cq) {
        Consumer<CompletionQueue> h = handler;
        if (h == null) {
            events.post(cq);
        } else {
            cq.eventDelivered();
            h.accept(cq);
        }
    }

    @Override
    public boolean deliverTo(Consumer<CompletionQueue> handler) {
        this.handler = handler;
        return true;
    }

    @Override
    public CompletionQueue await(Duration timeout) throws InterruptedException {
        checkOpen("ibv_get_cq_event");
        SoftCompletionQueue cq;
        do {
            cq = (SoftCompletionQueue) events.await(timeout);
            // a destroyed CQ's events went with it, as the kernel drops them from the channel
        } while (cq != null && cq.isClosed());
        if (cq != null) {
            cq.eventDelivered();
        }
        return cq;
    }

    @Override
    public void wakeup() {
        events.wakeup();
    }

    @Override
    void checkDestroyable() {
        if (users.get() > 0) {
            throw new ResourceBusyException("ibv_destroy_comp_channel", users.get() + " CQs still use the channel");
        }
    }

    @Override
    void destroy() {
        events.close();
    }
}
