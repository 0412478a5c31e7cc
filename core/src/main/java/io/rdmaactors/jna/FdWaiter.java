package io.rdmaactors.jna;

import io.rdmaactors.jna.binding.RdmaCore;
import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import io.rdmaactors.jna.binding.LibC;
import io.rdmaactors.verbs.ResourceClosedException;
import java.time.Duration;

/**
 * Waits for a non-blocking fd to become readable with {@code poll()}, together with an eventfd that
 * {@link #wakeup()} signals, so a blocked pump stops on demand. A wake-up before the wait is kept,
 * as the soft provider's queues keep it.
 */
final class FdWaiter {

    private final RdmaCore core;
    private final int wakeFd;
    private final Memory pollFds = new Memory(16);
    private final byte[] counter = new byte[8];
    private volatile boolean shutdown;

    FdWaiter(RdmaCore core, int fd, String call) {
        this.core = core;
        int flags = core.fcntl(fd, LibC.F_GETFL, 0);
        if (flags < 0 || core.fcntl(fd, LibC.F_SETFL, flags | LibC.O_NONBLOCK) < 0) {
            throw core.lastError(call);
        }
        wakeFd = core.eventfd(0, LibC.EFD_NONBLOCK | LibC.EFD_CLOEXEC);
        if (wakeFd < 0) {
            throw core.lastError("eventfd");
        }
        pollFds.setInt(0, fd);
        pollFds.setShort(4, LibC.POLLIN);
        pollFds.setInt(8, wakeFd);
        pollFds.setShort(12, LibC.POLLIN);
    }

    /**
     * Waits until the fd is readable (true), or the timeout passed or a wake-up came (false).
     * Callers serialise waits on one waiter.
     */
    synchronized boolean await(Duration timeout, String call) throws InterruptedException {
        if (shutdown) {
            throw new ResourceClosedException(call, "the event source is closed");
        }
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        pollFds.setShort(6, (short) 0);
        pollFds.setShort(14, (short) 0);
        long ms = Math.min(Integer.MAX_VALUE, Math.max(0, timeout.toMillis()));
        int n = core.poll(Pointer.nativeValue(pollFds), 2, (int) ms);
        if (n < 0) {
            int errno = core.errno();
            if (errno == LibC.EINTR) {
                return false;
            }
            throw core.failure("poll", errno);
        }
        if (pollFds.getShort(14) != 0) {
            if (shutdown) {
                throw new ResourceClosedException(call, "the event source is closed");
            }
            core.read(wakeFd, counter, 8);
            return false;
        }
        return n > 0 && pollFds.getShort(6) != 0;
    }

    void wakeup() {
        byte[] one = {1, 0, 0, 0, 0, 0, 0, 0};
        core.write(wakeFd, one, 8);
    }

    /** Makes every wait fail as closed, now and later; {@link #resume()} undoes it if the close was refused. */
    void shutdown() {
        shutdown = true;
        wakeup();
    }

    void resume() {
        shutdown = false;
    }

    /** Frees the eventfd; the watched fd belongs to its owner. Call once no wait can run. */
    synchronized void release() {
        core.close(wakeFd);
    }
}
