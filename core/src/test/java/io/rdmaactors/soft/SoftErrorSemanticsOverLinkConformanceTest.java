package io.rdmaactors.soft;

import io.rdmaactors.conformance.ErrorSemanticsConformance;
import io.rdmaactors.verbs.Fabric;

/** {@link ErrorSemanticsConformance} with its connections across a link, as between two processes. */
class SoftErrorSemanticsOverLinkConformanceTest extends ErrorSemanticsConformance {

    @Override
    protected Fabric openFabric() {
        return OverLinks.fabric();
    }

    @Override
    protected boolean overLinks() {
        return true;
    }
}
