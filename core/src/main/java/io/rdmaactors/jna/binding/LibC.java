package io.rdmaactors.jna.binding;

/** The few libc calls the provider needs: non-blocking fds, poll, an eventfd wake-up, error texts. */
public final class LibC {

    public static final int F_GETFL = 3;
    public static final int F_SETFL = 4;
    public static final int O_NONBLOCK = 0x800;
    public static final int EFD_NONBLOCK = 0x800;
    public static final int EFD_CLOEXEC = 0x80000;
    public static final short POLLIN = 1;
    public static final int EINTR = 4;

    private LibC() {
    }

    public static native int fcntl(int fd, int cmd, int arg);

    public static native int poll(long fds, long nfds, int timeoutMs);

    public static native int eventfd(int initval, int flags);

    public static native long read(int fd, byte[] buffer, long count);

    public static native long write(int fd, byte[] buffer, long count);

    public static native int close(int fd);

    public static native String strerror(int errno);

    public static native String gai_strerror(int code);
}
