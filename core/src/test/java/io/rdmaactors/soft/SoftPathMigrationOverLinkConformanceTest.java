package io.rdmaactors.soft;

import io.rdmaactors.conformance.PathMigrationConformance;
import io.rdmaactors.verbs.Fabric;

/** {@link PathMigrationConformance} with its connections across a link, as between two processes. */
class SoftPathMigrationOverLinkConformanceTest extends PathMigrationConformance {

    @Override
    protected Fabric openFabric() {
        return OverLinks.fabric();
    }

    @Override
    protected boolean overLinks() {
        return true;
    }
}
