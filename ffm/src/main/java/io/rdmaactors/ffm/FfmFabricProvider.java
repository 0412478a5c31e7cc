package io.rdmaactors.ffm;

import io.rdmaactors.ffm.binding.FfmRdmaCore;
import io.rdmaactors.ffm.binding.RdmaCoreLibraries;
import io.rdmaactors.jna.JnaFabricProvider;
import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.FabricProvider;
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
        return JnaFabricProvider.open("ffm", new FfmRdmaCore());
    }
}
