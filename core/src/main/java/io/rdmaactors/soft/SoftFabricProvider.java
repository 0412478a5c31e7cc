package io.rdmaactors.soft;

import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.FabricProvider;
import java.util.Map;

/** Registers the soft fabric under the name {@code soft}. */
public final class SoftFabricProvider implements FabricProvider {

    @Override
    public String name() {
        return "soft";
    }

    @Override
    public Fabric open(Map<String, String> options) {
        return new SoftFabric(SoftOptions.from(options));
    }
}
