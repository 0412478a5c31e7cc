package io.rdmaactors.soft;

import io.rdmaactors.conformance.QueuePairConformance;
import io.rdmaactors.verbs.Fabric;

/** {@link QueuePairConformance} with its connections across a link, as between two processes. */
class SoftQueuePairOverLinkConformanceTest extends QueuePairConformance {

    @Override
    protected Fabric openFabric() {
        return OverLinks.fabric();
    }

    @Override
    protected boolean overLinks() {
        return true;
    }
}
