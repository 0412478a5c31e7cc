package io.rdmaactors.jna;

import io.rdmaactors.conformance.PathMigrationConformance;
import io.rdmaactors.verbs.Fabric;
import org.junit.jupiter.api.extension.ExtendWith;

/** The PathMigration conformance rules on rdma-core; skipped without an RDMA device. */
@ExtendWith({RequiresRdmaDevice.class, SoftRoceLimits.class})
class JnaPathMigrationConformanceTest extends PathMigrationConformance {

    @Override
    protected Fabric openFabric() {
        return JnaFabrics.openOrSkip();
    }
}
