package io.rdmaactors.verbs;

import io.rdmaactors.cm.CmEventType;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Optional;

/** Failures a fabric can simulate on demand, for tests of failure paths. */
public interface FaultInjector {

    /** Takes a port down: paths through it lose every packet (PORT_ERR follows; APM may migrate). */
    void cutPort(Device device, int portNum);

    /** Brings a cut port back (PORT_ACTIVE follows). */
    void restorePort(Device device, int portNum);

    /**
     * The peer of a connection dies as a process killed with SIGKILL does: its resources vanish and
     * its kernel tells the survivor (DISCONNECTED on the survivor's id).
     */
    void killPeer(CmId connection);

    /** The connection's link silently drops everything from now on, in both directions. */
    void dropConnection(CmId connection);

    /** The next post on this QP fails with {@code errno}, as the device would refuse it. */
    void failNextPost(QueuePair qp, int errno);

    /** The next CM event of this type on this channel arrives {@code delay} late. */
    void delayNextEvent(EventChannel channel, CmEventType type, Duration delay);

    /** The next CM event of this type on each event channel of the fabric arrives {@code delay} late. */
    void delayNextEvent(CmEventType type, Duration delay);

    /** Removes the device: DEVICE_REMOVAL on its CM ids, DEVICE_FATAL, every QP to ERR. */
    void removeDevice(Device device);

    /**
     * The live CM id of the connection between these addresses, as its owner sees them (what an
     * actor's Connected names), so faults can be aimed at a connection the caller holds no id of.
     */
    Optional<CmId> connection(InetSocketAddress local, InetSocketAddress remote);
}
