package io.rdmaactors.soft;

import io.rdmaactors.conformance.CompletionChannelConformance;
import io.rdmaactors.verbs.Fabric;

/** {@link CompletionChannelConformance} with its connections across a link, as between two processes. */
class SoftCompletionChannelOverLinkConformanceTest extends CompletionChannelConformance {

    @Override
    protected Fabric openFabric() {
        return OverLinks.fabric();
    }

    @Override
    protected boolean overLinks() {
        return true;
    }
}
