package io.rdmaactors.soft.link;

import io.rdmaactors.verbs.ResourceKind;
import io.rdmaactors.verbs.ResourceLedger;
import io.rdmaactors.verbs.VerbsException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A fabric's links to other processes and the I/O threads that serve them: a fixed number of
 * threads ({@link LinkOptions#ioThreads()}), started with the first listener or link,
 * whatever the number of connections. A connect to a listener another process reached before goes
 * over the link already there: one wire between two ports. Every link starts with a {@link LinkHandshake}
 * on the user's cookie; an accepting side holds at most {@code links.pending} links that have not
 * finished it (each for {@code links.handshake.timeout.ms} at most) and a listener at most
 * {@code links.max} links.
 */
public final class TcpLinks {

    private static final Logger log = LoggerFactory.getLogger(TcpLinks.class);

    /** Names the I/O threads: the fabric's thread prefix and id. */
    private final String threadNames;
    /** The fabric's timer, for handshake timeouts. */
    private final ScheduledExecutorService timer;
    /** The fabric's ledger, which counts the links in use. */
    private final ResourceLedger ledger;
    private final int threads;
    private final String cookie;
    private final long handshakeTimeoutMs;
    private final int maxPending;
    private final int maxLinksPerListener;
    private final boolean sharedMemory;
    private final int ringBytes;
    /** Loaded with the I/O threads, so that a fabric that stays in one JVM never reads the cookie. */
    private byte[] secret;
    /** Guards the selectors apart from connecting, which may wait for a slow peer while an I/O thread accepts. */
    private final Object selectorLock = new Object();
    /** Started on first use, so a fabric that stays in one JVM has no I/O thread. */
    private volatile LinkSelector[] selectors;
    private boolean closed;
    /** Links this side opened, by the listener address they reach; the ones a connect may share. */
    private final Map<InetSocketAddress, TcpLink> outgoing = new ConcurrentHashMap<>();
    private final Set<TcpLink> live = ConcurrentHashMap.newKeySet();
    /** CQs polled by a consumer that did not arm them: while one is, it reads the links it polled lately. */
    private final AtomicInteger pollers = new AtomicInteger();
    /** Accepted links still in their handshake. */
    private final Set<TcpLink> pending = ConcurrentHashMap.newKeySet();

    public TcpLinks(String threadNames, ScheduledExecutorService timer, ResourceLedger ledger,
                    LinkOptions options) {
        this.threadNames = threadNames;
        this.timer = timer;
        this.ledger = ledger;
        this.threads = options.ioThreads();
        this.cookie = options.cookie();
        this.handshakeTimeoutMs = options.handshakeTimeoutMs();
        this.maxPending = options.maxPending();
        this.maxLinksPerListener = options.maxPerListener();
        this.sharedMemory = options.sharedMemory();
        this.ringBytes = options.ringBytes();
    }

    /** The I/O thread for a new channel, round robin. */
    private LinkSelector selector() throws IOException {
        synchronized (selectorLock) {
            if (closed) {
                throw new IOException("the fabric is closed");
            }
            if (selectors == null) {
                try {
                    secret = LinkCookie.load(cookie);
                } catch (IOException | RuntimeException e) {
                    throw new VerbsException("rdma-actors soft fabric", VerbsException.EACCES,
                            "cannot read the fabric's cookie: " + e.getMessage(), e);
                }
                LinkSelector[] started = new LinkSelector[threads];
                for (int i = 0; i < threads; i++) {
                    started[i] = new LinkSelector(threadNames + "-io-" + i);
                }
                selectors = started;
            }
            // the thread with the fewest links, so that two busy links share one only when they must
            LinkSelector least = selectors[0];
            for (LinkSelector s : selectors) {
                if (s.links() < least.links()) {
                    least = s;
                }
            }
            return least;
        }
    }

    /** Runs {@code task} on the fabric's timer after {@code delay}; nothing once the fabric closed. */
    void schedule(long delay, TimeUnit unit, Runnable task) {
        try {
            timer.schedule(task, delay, unit);
        } catch (RejectedExecutionException closed) {
            log.debug("the fabric closed: not scheduled", closed);
        }
    }

    public LinkAcceptor listen(ServerSocketChannel server, TcpLink.Endpoint listener) throws IOException {
        return new LinkAcceptor(this, selector(), server, listener);
    }

    /** The secret both sides of a link prove they know; set once an I/O thread started. */
    public byte[] secret() {
        synchronized (selectorLock) {
            return secret;
        }
    }

    /**
     * A connection to the listener at {@code to}, on the link to it if one is up, else on a new
     * one; throws when nobody listens there or the listener fails the handshake. Connecting
     * blocks the caller: on loopback it is answered at once.
     */
    public synchronized LinkConnection connect(InetSocketAddress to, TcpLink.Endpoint endpoint, int timeoutMs)
            throws IOException {
        TcpLink shared = outgoing.get(to);
        LinkConnection c = shared == null ? null : shared.open(endpoint);
        if (c != null) {
            return c;
        }
        LinkSelector selector = selector();
        SocketChannel channel = SocketChannel.open();
        LinkSharedMemory.Offered offered = null;
        try {
            channel.socket().connect(to, timeoutMs);
            channel.socket().setSoTimeout(timeoutMs);
            if (sharedMemory && to.getAddress() != null && LinkSharedMemory.onThisHost(to.getAddress())) {
                offered = LinkSharedMemory.create(ringBytes, to);
            }
            boolean taken = LinkHandshake.connect(channel, secret(), offered == null ? null : offered.offer());
            channel.configureBlocking(false);
            TcpLink link = new TcpLink(this, selector, channel, to, null, taken ? offered.memory() : null);
            outgoing.put(to, link);
            LinkConnection first = link.open(endpoint);
            link.serve();
            if (first == null) {
                throw new IOException("the link to " + to + " ended as it opened");
            }
            return first;
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        } finally {
            if (offered != null) {
                offered.unlink();
            }
        }
    }

    /**
     * A socket a listener's acceptor took; on its I/O thread. Beyond the caps it is closed at once:
     * the peer's connect sees the link end before its handshake.
     */
    public void accepted(SocketChannel channel, LinkAcceptor from) {
        try {
            if (pending.size() >= maxPending || from.links() >= maxLinksPerListener) {
                log.warn("{} refused a link from {}: {} links, {} of them in their handshake", from,
                        channel.getRemoteAddress(), from.links(), pending.size());
                channel.close();
                return;
            }
            channel.configureBlocking(false);
            TcpLink link = new TcpLink(this, selector(), channel, null, from, null);
            pending.add(link);
            timer.schedule(() -> {
                if (pending.contains(link)) {
                    link.end(new LinkHandshake.AuthenticationException("no handshake within " + handshakeTimeoutMs
                            + " ms"));
                }
            }, handshakeTimeoutMs, TimeUnit.MILLISECONDS);
            link.serve();
        } catch (IOException | RuntimeException e) {
            log.debug("could not serve a link accepted by {}", from, e);
            try {
                channel.close();
            } catch (IOException again) {
                log.debug("closing a link that never served", again);
            }
        }
    }

    /** The link is closing or ended: no new connection goes over it. */
    public void forget(TcpLink link) {
        if (link.remoteListener != null) {
            outgoing.remove(link.remoteListener, link);
        }
    }

    /** Whether a link to a process of this host may go through shared memory (offered, or taken). */
    public boolean sharesMemory() {
        return sharedMemory;
    }

    /** An accepted link whose peer proved it knows the cookie. */
    public void authenticated(TcpLink link) {
        pending.remove(link);
    }

    public void track(TcpLink link) {
        live.add(link);
    }

    /** A CQ's consumer polls it without having armed it. */
    public void pollerStarted() {
        pollers.incrementAndGet();
    }

    /**
     * It armed the CQ (or destroyed it): when nobody polls any more, the I/O threads read at once;
     * otherwise they look again soon whether the links it read still have a poller.
     */
    public void pollerStopped() {
        LinkSelector[] threads = selectors;
        boolean none = pollers.decrementAndGet() == 0;
        if (threads != null) {
            for (LinkSelector thread : threads) {
                if (none) {
                    thread.resumeAll();
                } else {
                    thread.pollerLeft();
                }
            }
        }
    }

    /** Whether a consumer polls a CQ it did not arm. */
    public boolean polling() {
        return pollers.get() > 0;
    }

    /** A link came into use or went out of it: the ledger counts the links in use (TcpLink.accountUse). */
    public void counted(boolean inUse) {
        if (inUse) {
            ledger.opened(ResourceKind.LINK);
        } else {
            ledger.closed(ResourceKind.LINK);
        }
    }

    /** The link's socket is closed: idempotent, as a link may end on its I/O thread and in a close. */
    public void untrack(TcpLink link) {
        if (live.remove(link)) {
            pending.remove(link);
            link.released();
        }
    }

    /** The I/O threads, none before the first listener or link. */
    public List<LinkSelector> ioThreads() {
        synchronized (selectorLock) {
            return selectors == null ? List.of() : List.of(selectors);
        }
    }

    /** How many links each I/O thread serves, in thread order; none before the first listener or link. */
    public List<Integer> linksPerThread() {
        synchronized (selectorLock) {
            return selectors == null ? List.of() : Arrays.stream(selectors).map(LinkSelector::links).toList();
        }
    }

    /** Links open now, whichever side opened them. */
    public int count() {
        return live.size();
    }

    /** Of those, the links whose frames go through shared memory. */
    public long sharingMemory() {
        return live.stream().filter(TcpLink::sharesMemory).count();
    }

    /** Closes every link, then stops the I/O threads. */
    public void close() {
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
