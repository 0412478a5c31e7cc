package io.rdmaactors.verbs;

/**
 * A verbs or CM call failed. Names the call (as rdma-core spells it) and the errno it stands for,
 * so the same failure reads the same on every provider.
 */
public class VerbsException extends RuntimeException {

    public static final int EPERM = 1;
    public static final int ENOENT = 2;
    public static final int EBADF = 9;
    public static final int EAGAIN = 11;
    public static final int ENOMEM = 12;
    public static final int EACCES = 13;
    public static final int EBUSY = 16;
    public static final int ENODEV = 19;
    public static final int EINVAL = 22;
    public static final int ENOSPC = 28;
    public static final int EOPNOTSUPP = 95;
    public static final int EADDRINUSE = 98;
    public static final int EADDRNOTAVAIL = 99;
    public static final int ENETUNREACH = 101;
    public static final int ECONNRESET = 104;
    public static final int ETIMEDOUT = 110;
    public static final int ECONNREFUSED = 111;
    public static final int EHOSTUNREACH = 113;

    private final String call;
    private final int errno;

    public VerbsException(String call, int errno, String message) {
        this(call, errno, message, null);
    }

    public VerbsException(String call, int errno, String message, Throwable cause) {
        super(call + ": " + message + " (errno " + errno + ")", cause);
        this.call = call;
        this.errno = errno;
    }

    /** The rdma-core call that failed, e.g. {@code ibv_post_send}. */
    public String call() {
        return call;
    }

    public int errno() {
        return errno;
    }

    /** The symbolic name of an errno (either sign), as {@code errno -l} prints it, or its number. */
    public static String errnoName(int errno) {
        return switch (Math.abs(errno)) {
            case EPERM -> "EPERM";
            case ENOENT -> "ENOENT";
            case EBADF -> "EBADF";
            case EAGAIN -> "EAGAIN";
            case ENOMEM -> "ENOMEM";
            case EACCES -> "EACCES";
            case EBUSY -> "EBUSY";
            case ENODEV -> "ENODEV";
            case EINVAL -> "EINVAL";
            case ENOSPC -> "ENOSPC";
            case EOPNOTSUPP -> "EOPNOTSUPP";
            case EADDRINUSE -> "EADDRINUSE";
            case EADDRNOTAVAIL -> "EADDRNOTAVAIL";
            case ENETUNREACH -> "ENETUNREACH";
            case ECONNRESET -> "ECONNRESET";
            case ETIMEDOUT -> "ETIMEDOUT";
            case ECONNREFUSED -> "ECONNREFUSED";
            case EHOSTUNREACH -> "EHOSTUNREACH";
            default -> "errno " + Math.abs(errno);
        };
    }

    /** The typed exception for an errno returned by {@code call}. */
    public static VerbsException of(String call, int errno, String message) {
        switch (errno) {
            case ENOMEM: return new QueueFullException(call, message);
            case EINVAL: return new InvalidRequestException(call, message);
            case EBUSY: return new ResourceBusyException(call, message);
            case EOPNOTSUPP: return new NotSupportedException(call, message);
            case EBADF: return new ResourceClosedException(call, message);
            default: return new VerbsException(call, errno, message);
        }
    }
}
