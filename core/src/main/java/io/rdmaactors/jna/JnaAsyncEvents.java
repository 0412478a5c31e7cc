package io.rdmaactors.jna;

import io.rdmaactors.jna.binding.RdmaCore;
import com.sun.jna.Pointer;
import io.rdmaactors.cm.AsyncEvent;
import io.rdmaactors.cm.AsyncEventType;
import io.rdmaactors.cm.EventSource;
import io.rdmaactors.jna.binding.IbvAsyncEvent;
import io.rdmaactors.jna.binding.IbvContext;
import io.rdmaactors.jna.binding.IbvQp;
import io.rdmaactors.verbs.VerbsException;
import java.time.Duration;

/**
 * A device's async events: the context's async fd, made non-blocking, waited on with poll. Each
 * event is copied (a QP is named by its number) and acknowledged at once, so destroying a resource
 * never waits on an event.
 */
final class JnaAsyncEvents implements EventSource<AsyncEvent> {

    private final JnaDevice device;
    private final RdmaCore core;
    private final FdWaiter waiter;
    private final IbvAsyncEvent event = new IbvAsyncEvent();

    JnaAsyncEvents(JnaDevice device) {
        this.device = device;
        this.core = device.fabric.core;
        this.waiter = new FdWaiter(core, new Pointer(device.context).getInt(IbvContext.ASYNC_FD), "ibv_get_async_event");
    }

    @Override
    public AsyncEvent await(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        do {
            device.checkOpen("ibv_get_async_event");
            if (!waiter.await(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())), "ibv_get_async_event")) {
                return null;
            }
            AsyncEvent copied = take();
            if (copied != null) {
                return copied;
            }
        } while (System.nanoTime() < deadline);
        return null;
    }

    private synchronized AsyncEvent take() {
        if (core.ibv_get_async_event(device.context, event) != 0) {
            int errno = core.errno();
            if (errno == VerbsException.EAGAIN) {
                return null;
            }
            throw core.failure("ibv_get_async_event", errno);
        }
        AsyncEventType type = AsyncEventType.fromCode(event.event_type);
        if (type == AsyncEventType.DEVICE_FATAL) {
            device.removed();
        }
        long element = event.element;
        if (type == null) {
            element = 0;
        } else if (type.affects() == AsyncEventType.Affects.QP) {
            element = Integer.toUnsignedLong(new Pointer(element).getInt(IbvQp.QP_NUM));
        } else if (type.affects() == AsyncEventType.Affects.PORT || type.affects() == AsyncEventType.Affects.DEVICE) {
            element = (int) element;
        }
        core.ibv_ack_async_event(event);
        return AsyncEvent.fromNative(event.event_type, element);
    }

    @Override
    public void wakeup() {
        waiter.wakeup();
    }

    void close() {
        waiter.shutdown();
        waiter.release();
    }
}
