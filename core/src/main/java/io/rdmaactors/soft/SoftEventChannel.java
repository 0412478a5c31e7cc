package io.rdmaactors.soft;

import io.rdmaactors.cm.CmEvent;
import io.rdmaactors.cm.CmEventType;
import io.rdmaactors.verbs.CmId;
import io.rdmaactors.verbs.EventChannel;
import io.rdmaactors.verbs.InvalidRequestException;
import io.rdmaactors.verbs.ResourceBusyException;
import io.rdmaactors.verbs.ResourceKind;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

final class SoftEventChannel extends SoftResource implements EventChannel {

    private final EventQueue<CmEvent> events = new EventQueue<>();
    private final Map<Long, SoftCmId> ids = new ConcurrentHashMap<>();
    private final Map<CmEventType, Long> delays = new ConcurrentHashMap<>();

    SoftEventChannel(SoftFabric fabric) {
        super(fabric, ResourceKind.EVENT_CHANNEL);
    }

    static SoftEventChannel of(EventChannel channel, String call) {
        if (!(channel instanceof SoftEventChannel c)) {
            throw new InvalidRequestException(call, "the event channel is not a soft fabric's");
        }
        c.checkOpen(call);
        return c;
    }

    void post(CmEvent event) {
        Long delay = event.type() == null ? null : delays.remove(event.type());
        if (delay != null) {
            fabric.schedule(() -> events.post(event), delay);
        } else {
            events.post(event);
        }
    }

    void delayNext(CmEventType type, Duration delay) {
        delays.put(type, delay.toMillis());
    }

    void add(SoftCmId id) {
        ids.put(id.handle(), id);
    }

    void remove(SoftCmId id) {
        ids.remove(id.handle());
    }

    @Override
    public CmEvent await(Duration timeout) throws InterruptedException {
        checkOpen("rdma_get_cm_event");
        return events.await(timeout);
    }

    @Override
    public void wakeup() {
        events.wakeup();
    }

    @Override
    public CmId cmId(long handle) {
        return ids.get(handle);
    }

    @Override
    void checkDestroyable() {
        if (!ids.isEmpty()) {
            throw new ResourceBusyException("rdma_destroy_event_channel", ids.size() + " CM ids are still on it");
        }
    }

    @Override
    void destroy() {
        events.close();
    }
}
