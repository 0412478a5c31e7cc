package io.rdmaactors.soft;

import io.rdmaactors.conformance.MemoryWindowConformance;
import io.rdmaactors.verbs.Fabric;

/** {@link MemoryWindowConformance} with its connections across a link, as between two processes. */
class SoftMemoryWindowOverLinkConformanceTest extends MemoryWindowConformance {

    @Override
    protected Fabric openFabric() {
        return OverLinks.fabric();
    }

    @Override
    protected boolean overLinks() {
        return true;
    }
}
