package io.rdmaactors.soft;

import io.rdmaactors.conformance.RcDataPathConformance;
import io.rdmaactors.verbs.Fabric;

class SoftRcDataPathConformanceTest extends RcDataPathConformance {

    @Override
    protected Fabric openFabric() {
        return Fabric.open("soft");
    }
}
