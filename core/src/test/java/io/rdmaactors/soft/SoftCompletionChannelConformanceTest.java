package io.rdmaactors.soft;

import io.rdmaactors.conformance.CompletionChannelConformance;
import io.rdmaactors.verbs.Fabric;

class SoftCompletionChannelConformanceTest extends CompletionChannelConformance {

    @Override
    protected Fabric openFabric() {
        return Fabric.open("soft");
    }
}
