package io.rdmaactors.soft;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A fabric's links to other processes and the I/O threads that serve them: a fixed number of
 * threads (option {@code io.threads}), started with the first listener or link, whatever the
 * number of connections. A connect to a listener another process reached before goes over the
 * link already there: one wire between two ports.
 */
final class TcpLinks {

    private static final Logger log = LoggerFactory.getLogger(TcpLinks.class);

    private final SoftFabric fabric;
    private final int threads;
    /** Guards the selectors apart from connecting, which may wait for a slow peer while an I/O thread accepts. */
    private final Object selectorLock = new Object();
    /** Started on first use, so a fabric that stays in one JVM has no I/O thread. */
    private LinkSelector[] selectors;
    private int nextSelector;
    private boolean closed;
    /** Links this side opened, by the listener address they reach; the ones a connect may share. */
    private final Map<InetSocketAddress, TcpLink> outgoing = new ConcurrentHashMap<>();
    private final Set<TcpLink> live = ConcurrentHashMap.newKeySet();

    TcpLinks(SoftFabric fabric, int threads) {
        this.fabric = fabric;
        this.threads = threads;
    }

    /** The I/O thread for a new channel, round robin. */
    private LinkSelector selector() throws IOException {
        synchronized (selectorLock) {
            if (closed) {
                throw new IOException("the fabric is closed");
            }
            if (selectors == null) {
                LinkSelector[] started = new LinkSelector[threads];
                for (int i = 0; i < threads; i++) {
                    started[i] = new LinkSelector("rdma-" + fabric.id + "-io-" + i);
                }
                selectors = started;
            }
            return selectors[nextSelector++ % threads];
        }
    }

    LinkAcceptor listen(ServerSocketChannel server, SoftCmId listener) throws IOException {
        return new LinkAcceptor(this, selector(), server, listener);
    }

    /**
     * A connection to the listener at {@code to}, on the link to it if one is up, else on a new
     * one; throws when nobody listens there. Connecting blocks the caller: on loopback it is
     * answered at once.
     */
    synchronized LinkConnection connect(InetSocketAddress to, TcpLink.Endpoint endpoint, int timeoutMs)
            throws IOException {
        TcpLink shared = outgoing.get(to);
        LinkConnection c = shared == null ? null : shared.open(endpoint);
        if (c != null) {
            return c;
        }
        SocketChannel channel = SocketChannel.open();
        try {
            channel.socket().connect(to, timeoutMs);
            channel.configureBlocking(false);
            TcpLink link = new TcpLink(this, selector(), channel, to, null);
            outgoing.put(to, link);
            LinkConnection first = link.open(endpoint);
            if (first == null) {
                throw new IOException("the link to " + to + " ended as it opened");
            }
            return first;
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    /** A socket a listener's acceptor took; on its I/O thread. */
    void accepted(SocketChannel channel, SoftCmId listener) {
        try {
            channel.configureBlocking(false);
            new TcpLink(this, selector(), channel, null, listener);
        } catch (IOException | RuntimeException e) {
            log.debug("could not serve a link accepted by {}", listener.localAddress(), e);
            try {
                channel.close();
            } catch (IOException again) {
                log.debug("closing a link that never served", again);
            }
        }
    }

    /** The link is closing or ended: no new connection goes over it. */
    void forget(TcpLink link) {
        if (link.remoteListener != null) {
            outgoing.remove(link.remoteListener, link);
        }
    }

    void track(TcpLink link) {
        live.add(link);
    }

    void untrack(TcpLink link) {
        live.remove(link);
    }

    /** Links open now, whichever side opened them. */
    int count() {
        return live.size();
    }

    /** Closes every link, then stops the I/O threads. */
    void close() {
        LinkSelector[] started;
        synchronized (selectorLock) {
            closed = true;
            started = selectors;
        }
        for (TcpLink link : List.copyOf(live)) {
            link.close();
        }
        outgoing.clear();
        if (started != null) {
            for (LinkSelector s : started) {
                s.stop();
            }
        }
    }
}
