package io.rdmaactors.soft;

import io.rdmaactors.conformance.PathMigrationConformance;
import io.rdmaactors.verbs.Fabric;

class SoftPathMigrationConformanceTest extends PathMigrationConformance {

    @Override
    protected Fabric openFabric() {
        return Fabric.open("soft");
    }
}
