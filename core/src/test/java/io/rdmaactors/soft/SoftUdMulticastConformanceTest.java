package io.rdmaactors.soft;

import io.rdmaactors.conformance.UdMulticastConformance;
import io.rdmaactors.verbs.Fabric;

class SoftUdMulticastConformanceTest extends UdMulticastConformance {

    @Override
    protected Fabric openFabric() {
        return Fabric.open("soft");
    }
}
