package io.rdmaactors.soft.link;

import java.io.IOException;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A listening CM id's socket, served by an I/O thread: each connection another process makes
 * becomes a {@link TcpLink} whose new connections are REQs to that listener.
 */
public final class LinkAcceptor implements LinkSelector.Handler {

    private static final Logger log = LoggerFactory.getLogger(LinkAcceptor.class);
    /**
     * How long accepting pauses after an accept failed, as Netty's acceptor does: what failed it
     * (no file descriptor left, say) lasts a while, and the listening socket stays ready
     * meanwhile, so that retrying at once would spin its I/O thread and log each time.
     */
    public static final long PAUSE_AFTER_FAILURE_MS = 1000;

    private final TcpLinks links;
    private final LinkSelector selector;
    private final ServerSocketChannel server;
    private final SelectionKey key;
    public final TcpLink.Endpoint listener;
    /** Links this acceptor took that are still open, for the cap. */
    private final AtomicInteger open = new AtomicInteger();

    public LinkAcceptor(TcpLinks links, LinkSelector selector, ServerSocketChannel server, TcpLink.Endpoint listener)
            throws IOException {
        this.links = links;
        this.selector = selector;
        this.server = server;
        this.listener = listener;
        server.configureBlocking(false);
        this.key = selector.register(server, SelectionKey.OP_ACCEPT, this);
    }

    @Override
    public void ready(SelectionKey selected) throws IOException {
        for (SocketChannel accepted; (accepted = server.accept()) != null; ) {
            links.accepted(accepted, this);
        }
    }

    public int links() {
        return open.get();
    }

    /** A link it took is being served. */
    public void opened() {
        open.incrementAndGet();
    }

    /** A link it took closed. */
    public void released() {
        open.decrementAndGet();
    }

    /** Accepting failed (out of file descriptors, say): the listener pauses, then goes on with the next one. */
    @Override
    public void failed(Throwable cause) {
        log.warn("accepting on {} failed; accepting again in {} ms", server, PAUSE_AFTER_FAILURE_MS, cause);
        interest(0);
        links.schedule(PAUSE_AFTER_FAILURE_MS, TimeUnit.MILLISECONDS, () -> interest(SelectionKey.OP_ACCEPT));
    }

    /** On the I/O thread: what the listening socket's readiness wakes it for, unless it closed. */
    private void interest(int ops) {
        selector.execute(() -> {
            if (key.isValid()) {
                key.interestOps(ops);
            }
        });
    }

    @Override
    public String toString() {
        return "listener " + server.socket().getLocalSocketAddress();
    }

    /** Stops listening; the port is free again on return. */
    public void close() {
        selector.close(server);
    }
}
