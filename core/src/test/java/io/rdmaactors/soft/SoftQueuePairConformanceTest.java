package io.rdmaactors.soft;

import io.rdmaactors.conformance.QueuePairConformance;
import io.rdmaactors.verbs.Fabric;

class SoftQueuePairConformanceTest extends QueuePairConformance {

    @Override
    protected Fabric openFabric() {
        return Fabric.open("soft");
    }
}
