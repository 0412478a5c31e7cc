package io.rdmaactors.soft;

import io.rdmaactors.cm.CmEvent;
import io.rdmaactors.soft.link.LinkAcceptor;
import io.rdmaactors.soft.link.LinkConnection;
import io.rdmaactors.soft.wire.CmMessage;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The listening side of a soft CM id (rdma_listen), as cma.c's listen id with ib_cm's REQ
 * handler: the acceptor of its TCP port, its entry in this JVM's table of listeners, and its
 * backlog. Each REQ that reaches it becomes a new passive id with a CONNECT_REQUEST, or a REJ when
 * the listener is gone (invalid service id) or its backlog is full. Its count of pending requests
 * is guarded by the listening id's monitor, which also guards the id's state it checks.
 */
final class SoftCmListener {

    /** Listeners of this JVM by bound address; a wildcard listener is keyed by 0.0.0.0. */
    private static final Map<InetSocketAddress, SoftCmListener> LISTENERS = new ConcurrentHashMap<>();

    final SoftCmId id;
    private final LinkAcceptor acceptor;
    private final int backlog;
    /** Requests handed to a passive id and not yet accepted or rejected. */
    private int pendingRequests;

    private SoftCmListener(SoftCmId id, LinkAcceptor acceptor, int backlog) {
        this.id = id;
        this.acceptor = acceptor;
        this.backlog = backlog;
    }

    /** Listens on the socket the id bound; the caller holds the id's monitor. */
    static SoftCmListener listen(SoftCmId id, ServerSocketChannel server, InetSocketAddress local, int backlog)
            throws IOException {
        LinkAcceptor acceptor = id.fabric.links.listen(server, id);
        SoftCmListener listener = new SoftCmListener(id, acceptor, backlog);
        InetSocketAddress key = local.getAddress().isAnyLocalAddress()
                ? new InetSocketAddress(SoftCmId.wildcard(), local.getPort()) : local;
        LISTENERS.put(key, listener);
        return listener;
    }

    /** The listener of this JVM a connect to {@code address} reaches: bound there, or on its port's wildcard. */
    static SoftCmListener find(InetSocketAddress address) {
        SoftCmListener l = LISTENERS.get(address);
        return l != null ? l : LISTENERS.get(new InetSocketAddress(SoftCmId.wildcard(), address.getPort()));
    }

    /** A REQ reached this listener, from an id in this JVM ({@code from}) or over {@code via}. */
    void onConnectRequest(CmMessage req, SoftCmId from, LinkConnection via) {
        SoftCmId passive;
        synchronized (id) {
            int refusal = 0;
            if (!id.isListening()) {
                refusal = CmEvent.Rejected.INVALID_SERVICE_ID;
            } else if (pendingRequests >= backlog) {
                refusal = CmEvent.Rejected.CONSUMER_DEFINED;
            }
            if (refusal != 0) {
                CmMessage rej = CmMessage.reject(refusal, new byte[0]);
                if (from != null) {
                    from.deliver(rej, null);
                } else {
                    via.send(rej);
                    via.close();
                }
                return;
            }
            pendingRequests++;
            passive = new SoftCmId(id.fabric, id.channel(), id.portSpace());
        }
        passive.acceptRequest(this, req, from, via);
    }

    /** A passive id born here was accepted, rejected or destroyed: room for one more request. */
    void released() {
        synchronized (id) {
            pendingRequests--;
        }
    }

    /** No connect finds this listener any more; the caller holds the id's monitor. */
    void unregister() {
        LISTENERS.values().remove(this);
    }

    /** Stops accepting, and closes the listening socket. */
    void close() {
        acceptor.close();
    }
}
