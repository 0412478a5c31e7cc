package io.rdmaactors.ffm;

import io.rdmaactors.ffm.binding.FfmContextOps;
import io.rdmaactors.ffm.binding.RdmaCoreLibraries;
import io.rdmaactors.jna.JnaFabricProvider;
import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.FabricProvider;
import java.util.Map;

/**
 * Registers rdma-core with the inline verbs through FFM under the name {@code ffm}: post, poll and
 * arm (the calls of every message) are {@link FfmContextOps} downcalls on the driver's ops
 * pointers; creating, modifying and the CM still go through the jna provider's bindings, which
 * this fabric shares.
 */
public final class FfmFabricProvider implements FabricProvider {

    @Override
    public String name() {
        return "ffm";
    }

    @Override
    public Fabric open(Map<String, String> options) {
        RdmaCoreLibraries.load();
        return JnaFabricProvider.open("ffm", FfmContextOps::new);
    }
}
