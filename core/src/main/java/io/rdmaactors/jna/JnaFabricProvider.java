package io.rdmaactors.jna;

import io.rdmaactors.jna.binding.ContextOps;
import io.rdmaactors.jna.binding.NativeLibraries;
import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.FabricProvider;
import java.util.Map;
import java.util.function.LongFunction;

/** Registers the rdma-core fabric (librdmacm + libibverbs through JNA) under the name {@code jna}. */
public final class JnaFabricProvider implements FabricProvider {

    @Override
    public String name() {
        return "jna";
    }

    @Override
    public Fabric open(Map<String, String> options) {
        return open("jna", ContextOps::of);
    }

    /**
     * An rdma-core fabric named {@code provider} whose devices call the inline verbs (post, poll,
     * arm) through {@code ops} of their context: the ffm provider's FFM downcalls.
     */
    public static Fabric open(String provider, LongFunction<ContextOps> ops) {
        NativeLibraries.load();
        return new JnaFabric(provider, ops);
    }
}
