package io.rdmaactors.jna;

import com.sun.jna.Pointer;
import io.rdmaactors.jna.binding.IbvCompChannel;
import io.rdmaactors.verbs.CompletionChannel;
import io.rdmaactors.verbs.CompletionQueue;
import io.rdmaactors.verbs.InvalidRequestException;
import io.rdmaactors.verbs.ResourceKind;
import io.rdmaactors.verbs.VerbsException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** An {@code ibv_comp_channel} whose fd is non-blocking and waited on with poll and a wake-up fd. */
final class JnaCompletionChannel extends JnaResource implements CompletionChannel {

    private final FdWaiter waiter;
    private final Map<Long, JnaCompletionQueue> queues = new ConcurrentHashMap<>();
    private final long[] cq = new long[1];
    private final long[] cqContext = new long[1];

    JnaCompletionChannel(JnaDevice device, long channel) {
        super(device.fabric, ResourceKind.COMPLETION_CHANNEL, channel);
        this.waiter = new FdWaiter(core, new Pointer(channel).getInt(IbvCompChannel.FD), "ibv_get_cq_event");
    }

    static JnaCompletionChannel of(CompletionChannel channel, String call) {
        if (channel instanceof JnaCompletionChannel j) {
            return j;
        }
        throw new InvalidRequestException(call, "not a completion channel of the jna fabric: " + channel);
    }

    void attach(JnaCompletionQueue queue) {
        queues.put(queue.pointer, queue);
    }

    void detach(JnaCompletionQueue queue) {
        queues.remove(queue.pointer);
    }

    @Override
    public CompletionQueue await(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        do {
            long channel = enter("ibv_get_cq_event");
            try {
                if (!waiter.await(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())), "ibv_get_cq_event")) {
                    return null;
                }
                JnaCompletionQueue fired = take(channel);
                if (fired != null) {
                    return fired;
                }
            } finally {
                exit();
            }
        } while (System.nanoTime() < deadline);
        return null;
    }

    private synchronized JnaCompletionQueue take(long channel) {
        if (core.ibv_get_cq_event(channel, cq, cqContext) != 0) {
            int errno = core.errno();
            if (errno == VerbsException.EAGAIN) {
                return null;
            }
            throw core.failure("ibv_get_cq_event", errno);
        }
        JnaCompletionQueue queue = queues.get(cq[0]);
        if (queue == null) {
            // No longer attached here: acknowledge, so nothing waits on the event.
            core.ibv_ack_cq_events(cq[0], 1);
            return null;
        }
        queue.eventTaken();
        return queue;
    }

    @Override
    public void wakeup() {
        waiter.wakeup();
    }

    @Override
    void stopWaits() {
        waiter.shutdown();
    }

    @Override
    void resumeWaits() {
        waiter.resume();
    }

    @Override
    String destroyCall() {
        return "ibv_destroy_comp_channel";
    }

    @Override
    int destroy(boolean force) {
        int rc = core.ibv_destroy_comp_channel(pointer);
        if (rc == 0) {
            waiter.release();
        }
        return rc;
    }
}
