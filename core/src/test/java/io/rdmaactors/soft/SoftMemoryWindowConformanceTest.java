package io.rdmaactors.soft;

import io.rdmaactors.conformance.MemoryWindowConformance;
import io.rdmaactors.verbs.Fabric;

class SoftMemoryWindowConformanceTest extends MemoryWindowConformance {

    @Override
    protected Fabric openFabric() {
        return Fabric.open("soft");
    }
}
