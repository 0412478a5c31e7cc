package io.rdmaactors.soft;

import io.rdmaactors.conformance.ErrorSemanticsConformance;
import io.rdmaactors.verbs.Fabric;

class SoftErrorSemanticsConformanceTest extends ErrorSemanticsConformance {

    @Override
    protected Fabric openFabric() {
        return Fabric.open("soft");
    }
}
