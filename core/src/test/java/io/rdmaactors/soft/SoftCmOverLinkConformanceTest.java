package io.rdmaactors.soft;

import io.rdmaactors.conformance.CmConformance;
import io.rdmaactors.verbs.Fabric;

/** {@link CmConformance} with its connections across a link, as between two processes. */
class SoftCmOverLinkConformanceTest extends CmConformance {

    @Override
    protected Fabric openFabric() {
        return OverLinks.fabric();
    }

    @Override
    protected boolean overLinks() {
        return true;
    }
}
