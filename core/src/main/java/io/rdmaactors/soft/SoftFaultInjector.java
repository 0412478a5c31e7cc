package io.rdmaactors.soft;

import io.rdmaactors.cm.AsyncEvent;
import io.rdmaactors.cm.AsyncEventType;
import io.rdmaactors.cm.CmEventType;
import io.rdmaactors.verbs.CmId;
import io.rdmaactors.verbs.Device;
import io.rdmaactors.verbs.EventChannel;
import io.rdmaactors.verbs.FaultInjector;
import io.rdmaactors.verbs.InvalidRequestException;
import io.rdmaactors.verbs.QueuePair;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Optional;

/** The soft fabric's fault injection, for tests of every failure path. */
final class SoftFaultInjector implements FaultInjector {

    private final SoftFabric fabric;

    SoftFaultInjector(SoftFabric fabric) {
        this.fabric = fabric;
    }

    @Override
    public void cutPort(Device device, int portNum) {
        SoftPort port = soft(device).port(portNum, "cutPort");
        port.cut = true;
        port.device.raise(new AsyncEvent.PortEvent(AsyncEventType.PORT_ERR, portNum));
    }

    @Override
    public void restorePort(Device device, int portNum) {
        SoftPort port = soft(device).port(portNum, "restorePort");
        port.cut = false;
        port.device.raise(new AsyncEvent.PortEvent(AsyncEventType.PORT_ACTIVE, portNum));
    }

    @Override
    public Optional<CmId> connection(InetSocketAddress local, InetSocketAddress remote) {
        return fabric.liveCmIds().stream()
                .filter(id -> local.equals(id.localAddress()) && remote.equals(id.remoteAddress()))
                .findFirst();
    }

    @Override
    public void killPeer(CmId connection) {
        soft(connection).killPeer();
    }

    @Override
    public void dropConnection(CmId connection) {
        soft(connection).dropConnection();
    }

    @Override
    public void failNextPost(QueuePair qp, int errno) {
        if (!(qp instanceof SoftQueuePair q)) {
            throw new InvalidRequestException("failNextPost", "not a soft QP");
        }
        q.failNextPost(errno);
    }

    @Override
    public void delayNextEvent(EventChannel channel, CmEventType type, Duration delay) {
        SoftEventChannel.of(channel, "delayNextEvent").delayNext(type, delay);
    }

    @Override
    public void delayNextEvent(CmEventType type, Duration delay) {
        fabric.eventChannels().forEach(c -> c.delayNext(type, delay));
    }

    @Override
    public void removeDevice(Device device) {
        SoftDevice d = soft(device);
        d.markRemoved();
        fabric.removeDevice(d);
        d.raise(new AsyncEvent.DeviceEvent(AsyncEventType.DEVICE_FATAL));
        for (SoftQueuePair qp : d.queuePairs()) {
            qp.fatal(null);
        }
        for (SoftCmId id : fabric.cmIds()) {
            id.deviceRemoved(d);
        }
    }

    private SoftDevice soft(Device device) {
        if (!(device instanceof SoftDevice d) || d.fabric != fabric) {
            throw new InvalidRequestException("fault injection", "not a device of this soft fabric");
        }
        return d;
    }

    private SoftCmId soft(CmId id) {
        if (!(id instanceof SoftCmId s) || s.fabric != fabric) {
            throw new InvalidRequestException("fault injection", "not a CM id of this soft fabric");
        }
        return s;
    }
}
