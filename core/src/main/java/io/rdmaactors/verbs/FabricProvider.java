package io.rdmaactors.verbs;

import java.util.Map;

/** A way to reach a fabric, found with {@link java.util.ServiceLoader}. */
public interface FabricProvider {

    String name();

    Fabric open(Map<String, String> options);
}
