package io.rdmaactors.jna.binding;

import com.sun.jna.Native;
import com.sun.jna.Platform;
import io.rdmaactors.verbs.FabricUnavailableException;

/** Loads librdmacm, libibverbs and libc once; a missing library is one clear, typed error. */
public final class NativeLibraries {

    /**
     * The names JNA loads ("ibverbs" is libibverbs.so[.1] on the library path; a path works too). The
     * system properties {@code rdma-actors.jna.ibverbs} and {@code rdma-actors.jna.rdmacm} override
     * them, read once when the provider is first used: naming a library that does not exist lets a
     * test see the provider on a machine without rdma-core without uninstalling it (JnaSafetyTest).
     */
    public static final String IBVERBS = System.getProperty("rdma-actors.jna.ibverbs", "ibverbs");
    public static final String RDMACM = System.getProperty("rdma-actors.jna.rdmacm", "rdmacm");
    private static Throwable failure;
    private static boolean loaded;

    private NativeLibraries() {
    }

    public static synchronized void load() {
        if (!loaded && failure == null) {
            try {
                Native.register(LibC.class, Platform.C_LIBRARY_NAME);
                Native.register(Ibverbs.class, IBVERBS);
                Native.register(Rdmacm.class, RDMACM);
                loaded = true;
            } catch (LinkageError e) {
                failure = e;
            }
        }
        if (failure != null) {
            throw new FabricUnavailableException("dlopen", "librdmacm/libibverbs cannot be loaded ("
                    + failure.getMessage() + "); install the Debian packages librdmacm1 libibverbs1 ibverbs-providers",
                    failure);
        }
    }
}
