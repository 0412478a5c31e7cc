package io.rdmaactors.jna;

/** The few libc calls the provider needs: non-blocking fds, poll, an eventfd wake-up, error texts. */
final class LibC {

    static final int F_GETFL = 3;
    static final int F_SETFL = 4;
    static final int O_NONBLOCK = 0x800;
    static final int EFD_NONBLOCK = 0x800;
    static final int EFD_CLOEXEC = 0x80000;
    static final short POLLIN = 1;
    static final int EINTR = 4;

    private LibC() {
    }

    static native int fcntl(int fd, int cmd, int arg);

    static native int poll(long fds, long nfds, int timeoutMs);

    static native int eventfd(int initval, int flags);

    static native long read(int fd, byte[] buffer, long count);

    static native long write(int fd, byte[] buffer, long count);

    static native int close(int fd);

    static native String strerror(int errno);

    static native String gai_strerror(int code);
}
