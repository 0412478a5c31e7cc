package io.rdmaactors.soft;

import io.rdmaactors.conformance.FaultInjectionConformance;
import io.rdmaactors.verbs.Fabric;

/** {@link FaultInjectionConformance} with its connections across a link, as between two processes. */
class SoftFaultInjectionOverLinkConformanceTest extends FaultInjectionConformance {

    @Override
    protected Fabric openFabric() {
        return OverLinks.fabric();
    }

    @Override
    protected boolean overLinks() {
        return true;
    }
}
