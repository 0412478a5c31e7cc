package io.rdmaactors.soft;

import io.rdmaactors.conformance.SrqConformance;
import io.rdmaactors.verbs.Fabric;

class SoftSrqConformanceTest extends SrqConformance {

    @Override
    protected Fabric openFabric() {
        return Fabric.open("soft");
    }
}
