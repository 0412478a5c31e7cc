package io.rdmaactors.soft;

import io.rdmaactors.conformance.CmConformance;
import io.rdmaactors.verbs.Fabric;

class SoftCmConformanceTest extends CmConformance {

    @Override
    protected Fabric openFabric() {
        return Fabric.open("soft");
    }
}
