package io.rdmaactors.ffm;

import io.rdmaactors.ffm.binding.FfmRdmaCore;
import io.rdmaactors.ffm.binding.RdmaCoreLibraries;
import io.rdmaactors.jna.JnaFabricProvider;
import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.FabricProvider;
import io.rdmaactors.verbs.FabricUnavailableException;
import java.util.Map;

/**
 * Registers rdma-core through FFM under the name {@code ffm}: every call into librdmacm, libibverbs
 * and libc is an {@link FfmRdmaCore} downcall, and post, poll and arm (the calls of every message)
 * go through the driver's ops pointers ({@link io.rdmaactors.ffm.binding.FfmContextOps}). The
 * resources are the jna provider's, which take their binding as an argument; JNA still gives the
 * control path's structs their memory.
 */
public final class FfmFabricProvider implements FabricProvider {

    @Override
    public String name() {
        return "ffm";
    }

    @Override
    public Fabric open(Map<String, String> options) {
        RdmaCoreLibraries.load();
        FfmRdmaCore core;
        try {
            core = new FfmRdmaCore();
        } catch (LinkageError e) {
            // a function its handles need is missing from the installed libraries (the first try
            // names it; a later one finds the class unusable): typed either way
            Throwable cause = e instanceof ExceptionInInitializerError ? e.getCause() : e;
            throw cause instanceof FabricUnavailableException missing ? missing
                    : new FabricUnavailableException("dlsym", "rdma-core's functions cannot be bound: " + e, e);
        }
        return JnaFabricProvider.open("ffm", core);
    }
}
