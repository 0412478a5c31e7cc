package io.rdmaactors.soft;

import io.rdmaactors.conformance.FaultInjectionConformance;
import io.rdmaactors.verbs.Fabric;

class SoftFaultInjectionConformanceTest extends FaultInjectionConformance {

    @Override
    protected Fabric openFabric() {
        return Fabric.open("soft");
    }
}
