package io.rdmaactors.soft.link;

import java.io.IOException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.Iterator;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One I/O thread of the soft fabric: a {@link Selector} that serves every link and listening
 * socket registered with it, as Pekko IO's selection handler does, so the fabric's threads do not
 * grow with its connections. A failure while serving one channel ends that channel only.
 */
public final class LinkSelector {

    private static final Logger log = LoggerFactory.getLogger(LinkSelector.class);

    /** What a selected key's attachment does when its channel is ready. */
    public interface Handler {
        void ready(SelectionKey key) throws IOException;

        /** The handler threw: it ends its channel; the thread goes on serving the others. */
        void failed(Throwable cause);
    }

    private final Selector selector;
    private final Thread thread;
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    /** Links it serves now: a new link goes to the thread with the fewest. */
    private final AtomicInteger links = new AtomicInteger();
    /**
     * Links whose reading a poller took over: while any is, the thread looks every tick whether it
     * still does. The tick starts at TICK_MS and doubles up to MAX_TICK_MS while every look finds
     * them polled: on a core the pollers spin on, each tick's wake-up takes the core from one of
     * them, and a poller that stops polling (arming its CQ) says so ({@link #pollerLeft}).
     */
    private final Set<TcpLink> paused = ConcurrentHashMap.newKeySet();
    private static final long TICK_MS = 1;
    private static final long MAX_TICK_MS = 8;
    /** The I/O thread's. */
    private long tickMs = TICK_MS;
    /** A poller stopped while others poll on: the next look comes after TICK_MS again. */
    private final AtomicBoolean pollerLeft = new AtomicBoolean();
    private volatile boolean stopped;

    public LinkSelector(String name) throws IOException {
        this.selector = Selector.open();
        this.thread = new Thread(this::run, name);
        thread.setDaemon(true);
        thread.start();
    }

    public int links() {
        return links.get();
    }

    public void linkOpened() {
        links.incrementAndGet();
    }

    public void linkClosed() {
        links.decrementAndGet();
    }

    public boolean inThread() {
        return Thread.currentThread() == thread;
    }

    /** Runs a task on the I/O thread: channels are registered and closed there. */
    public void execute(Runnable task) {
        if (inThread()) {
            task.run();
            return;
        }
        tasks.add(task);
        selector.wakeup();
    }

    /** Runs a task on the I/O thread and waits for it (briefly: it never blocks). */
    public void executeAndWait(Runnable task) {
        if (inThread() || stopped) {
            task.run();
            return;
        }
        CountDownLatch done = new CountDownLatch(1);
        execute(() -> {
            try {
                task.run();
            } finally {
                done.countDown();
            }
        });
        try {
            done.await(1, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Registers a channel for {@code ops}. Since JDK 11 this does not wait for a select in
     * progress; the wakeup makes the new key count from now on.
     */
    public SelectionKey register(SelectableChannel channel, int ops, Handler handler) throws IOException {
        SelectionKey key = channel.register(selector, ops, handler);
        selector.wakeup();
        return key;
    }

    /** Runs a task on the I/O thread's next turn, even when called from it: no caller's lock is held then. */
    public void later(Runnable task) {
        tasks.add(task);
        selector.wakeup();
    }

    /** Nobody polls any more: every link paused reads on this thread again. */
    public void resumeAll() {
        if (!paused.isEmpty()) {
            for (TcpLink link : paused) {
                link.resumeReading();
            }
        }
    }

    /** On the I/O thread: a poller reads for {@code link} now. */
    public void paused(TcpLink link) {
        paused.add(link);
        tickMs = TICK_MS;
    }

    /**
     * A CQ's consumer stopped polling while others poll on: the links it read may have nobody now,
     * so the ticks start short again.
     */
    public void pollerLeft() {
        if (!paused.isEmpty() && !pollerLeft.getAndSet(true)) {
            selector.wakeup();
        }
    }

    /** The link is read by this thread again (or closed): a select from another thread sees it at once. */
    public void resumed(TcpLink link) {
        if (paused.remove(link) && !inThread()) {
            selector.wakeup();
        }
    }

    /** Makes a changed interest set take effect now rather than at the next select. */
    public void wakeup() {
        selector.wakeup();
    }

    /**
     * Closes a channel so that its socket is released at once (a listening port can be bound
     * again on return): a registered channel is really closed when the selector deregisters it.
     */
    public void close(SelectableChannel channel) {
        executeAndWait(() -> {
            try {
                channel.close();
                if (selector.isOpen()) {
                    selector.selectNow(); // deregisters the cancelled key, which releases the socket
                }
            } catch (IOException e) {
                log.debug("closing {}", channel, e);
            }
        });
    }

    private void run() {
        try {
            while (!stopped) {
                if (paused.isEmpty()) {
                    selector.select();
                } else {
                    selector.select(tickMs);
                    boolean allPolled = true;
                    for (TcpLink link : paused) {
                        allPolled &= link.resumeUnlessPolled();
                    }
                    tickMs = pollerLeft.getAndSet(false) || !allPolled ? TICK_MS : Math.min(2 * tickMs, MAX_TICK_MS);
                }
                for (Runnable task; (task = tasks.poll()) != null; ) {
                    runSafely(task);
                }
                Iterator<SelectionKey> selected = selector.selectedKeys().iterator();
                while (selected.hasNext()) {
                    SelectionKey key = selected.next();
                    selected.remove();
                    serve(key);
                }
            }
        } catch (IOException | ClosedSelectorException e) {
            if (!stopped) {
                log.warn("I/O thread {} ended", thread.getName(), e);
            }
        } finally {
            for (Runnable task; (task = tasks.poll()) != null; ) {
                runSafely(task);
            }
            try {
                selector.close();
            } catch (IOException e) {
                log.debug("closing selector", e);
            }
        }
    }

    private static void runSafely(Runnable task) {
        try {
            task.run();
        } catch (Throwable t) { // the thread serves every link of the fabric: it must not die
            log.warn("a task on a soft fabric I/O thread failed", t);
        }
    }

    private static void serve(SelectionKey key) {
        Handler handler = (Handler) key.attachment();
        try {
            if (key.isValid()) {
                handler.ready(key);
            }
        } catch (Throwable t) { // one link's failure, whatever it is, ends that link only
            try {
                handler.failed(t);
            } catch (Throwable again) {
                log.warn("failing a soft fabric link failed too", again);
            }
        }
    }

    /** Stops the thread; the selector and every channel still registered with it close. */
    public void stop() {
        stopped = true;
        selector.wakeup();
        if (!inThread()) {
            try {
                thread.join(1000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
