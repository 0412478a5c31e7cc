package io.rdmaactors.jna;

import io.rdmaactors.jna.binding.JnaRdmaCore;
import io.rdmaactors.jna.binding.RdmaCore;
import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.FabricProvider;
import java.util.Map;

/** Registers the rdma-core fabric (librdmacm + libibverbs through JNA) under the name {@code jna}. */
public final class JnaFabricProvider implements FabricProvider {

    @Override
    public String name() {
        return "jna";
    }

    @Override
    public Fabric open(Map<String, String> options) {
        return open("jna", new JnaRdmaCore());
    }

    /** An rdma-core fabric named {@code provider} whose every native call goes through {@code core}: the ffm provider's FFM downcalls. */
    public static Fabric open(String provider, RdmaCore core) {
        return new JnaFabric(provider, core);
    }
}
