package io.rdmaactors.soft;

import io.rdmaactors.conformance.SrqConformance;
import io.rdmaactors.verbs.Fabric;

/** {@link SrqConformance} with its connections across a link, as between two processes. */
class SoftSrqOverLinkConformanceTest extends SrqConformance {

    @Override
    protected Fabric openFabric() {
        return OverLinks.fabric();
    }

    @Override
    protected boolean overLinks() {
        return true;
    }
}
