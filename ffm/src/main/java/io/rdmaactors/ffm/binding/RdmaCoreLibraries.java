package io.rdmaactors.ffm.binding;

import io.rdmaactors.verbs.FabricUnavailableException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;

/**
 * libibverbs and librdmacm through {@link Linker}: looked up once, a missing library one clear,
 * typed error. Pointers cross as {@code long} (the x86-64 and AArch64 ABIs pass both in one
 * integer register), so a call allocates nothing.
 */
public final class RdmaCoreLibraries {

    private static final Linker LINKER = Linker.nativeLinker();
    private static SymbolLookup libraries;

    private RdmaCoreLibraries() {
    }

    /** libibverbs then librdmacm; throws {@link FabricUnavailableException} where either is missing. */
    public static synchronized SymbolLookup load() {
        if (libraries == null) {
            try {
                libraries = SymbolLookup.libraryLookup("libibverbs.so.1", Arena.global())
                        .or(SymbolLookup.libraryLookup("librdmacm.so.1", Arena.global()));
            } catch (IllegalArgumentException e) {
                throw new FabricUnavailableException("dlopen", "librdmacm/libibverbs cannot be loaded ("
                        + e.getMessage() + "); install the Debian packages librdmacm1 libibverbs1 ibverbs-providers", e);
            }
        }
        return libraries;
    }

    /**
     * A downcall to a function pointer (an {@code ops} entry). {@code critical}: the call neither
     * blocks nor calls back, so the JVM skips the thread-state transition around it.
     */
    static MethodHandle downcall(long function, FunctionDescriptor descriptor, boolean critical) {
        MemorySegment target = MemorySegment.ofAddress(function);
        return critical ? LINKER.downcallHandle(target, descriptor, Linker.Option.critical(false))
                : LINKER.downcallHandle(target, descriptor);
    }

    /** A downcall throws only what the JVM throws (an error); nothing checked can come back. */
    static RuntimeException rethrow(Throwable t) {
        if (t instanceof Error e) {
            throw e;
        }
        return t instanceof RuntimeException r ? r : new IllegalStateException(t);
    }
}
