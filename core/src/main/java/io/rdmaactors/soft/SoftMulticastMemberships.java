package io.rdmaactors.soft;

import io.rdmaactors.verbs.ResourceKind;
import java.net.InetSocketAddress;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The multicast groups a soft UDP id joined (rdma_join_multicast), each a MULTICAST_MEMBERSHIP in
 * the fabric's ledger until it is left: the id's QP is attached to every one of them while it has
 * a QP, as rdma_cm attaches it, whether the QP came before the join or after.
 */
final class SoftMulticastMemberships {

    private final SoftFabric fabric;
    private final Set<InetSocketAddress> groups = ConcurrentHashMap.newKeySet();

    SoftMulticastMemberships(SoftFabric fabric) {
        this.fabric = fabric;
    }

    /** Joins {@code group}, attaching {@code qp} when there is one; false when already joined. */
    boolean join(InetSocketAddress group, SoftQueuePair qp) {
        if (!groups.add(group)) {
            return false;
        }
        fabric.ledger().opened(ResourceKind.MULTICAST_MEMBERSHIP);
        if (qp != null) {
            qp.attachMulticast(SoftPort.multicastGid(group.getAddress()), 0);
        }
        return true;
    }

    /** Leaves {@code group}, detaching {@code qp} when there is one; false when it was not joined. */
    boolean leave(InetSocketAddress group, SoftQueuePair qp) {
        if (!groups.remove(group)) {
            return false;
        }
        if (qp != null) {
            qp.detachMulticast(SoftPort.multicastGid(group.getAddress()), 0);
        }
        fabric.ledger().closed(ResourceKind.MULTICAST_MEMBERSHIP);
        return true;
    }

    /** A QP the id created joins every group the id joined before it. */
    void attach(SoftQueuePair qp) {
        for (InetSocketAddress g : groups) {
            qp.attachMulticast(SoftPort.multicastGid(g.getAddress()), 0);
        }
    }

    /** The id's QP goes, its memberships stay with the id. */
    void detach(SoftQueuePair qp) {
        for (InetSocketAddress g : groups) {
            qp.detachMulticast(SoftPort.multicastGid(g.getAddress()), 0);
        }
    }

    /** The id is destroyed: every group is left. */
    void leaveAll(SoftQueuePair qp) {
        for (InetSocketAddress g : groups) {
            leave(g, qp);
        }
    }
}
