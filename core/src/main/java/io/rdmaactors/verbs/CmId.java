package io.rdmaactors.verbs;

import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * An RDMA CM id ({@code rdma_cm_id}). Every asynchronous step reports through the event channel it
 * is on; a call made in the wrong state fails at once with {@link InvalidStateException}.
 */
public interface CmId extends AutoCloseable {

    /** The handle CM events name this id by. */
    long handle();

    PortSpace portSpace();

    EventChannel channel();

    void bind(InetSocketAddress address);

    void listen(int backlog);

    /** Resolves {@code destination} to a local device; ADDR_RESOLVED or ADDR_ERROR follows. */
    void resolveAddress(InetSocketAddress source, InetSocketAddress destination, Duration timeout);

    /** ROUTE_RESOLVED or ROUTE_ERROR follows. */
    void resolveRoute(Duration timeout);

    /** The device the id is bound to once its address is resolved or bound; null before. */
    Device device();

    int portNum();

    /** Creates the id's QP and moves it to INIT ({@code rdma_create_qp}). */
    QueuePair createQueuePair(ProtectionDomain pd, QpInitAttributes attributes);

    QueuePair queuePair();

    /** Destroys the id's QP ({@code rdma_destroy_qp}). */
    void destroyQueuePair();

    void connect(ConnectionParameters parameters);

    void accept(ConnectionParameters parameters);

    void reject(byte[] privateData);

    /** Moves the QP to ERR, flushing its work requests, and tells the peer; DISCONNECTED follows. */
    void disconnect();

    /** Moves the id, and the events it will get, to another channel ({@code rdma_migrate_id}). */
    void migrate(EventChannel channel);

    /** Joins a multicast group on this UD id; MULTICAST_JOIN or MULTICAST_ERROR follows. */
    void joinMulticast(InetSocketAddress group);

    void leaveMulticast(InetSocketAddress group);

    InetSocketAddress localAddress();

    InetSocketAddress remoteAddress();

    /** Destroys the id (its QP too, if still there). */
    @Override
    void close();
}
