package io.rdmaactors.jna;

import io.rdmaactors.jna.binding.NativeLibraries;
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
        NativeLibraries.load();
        return new JnaFabric();
    }
}
