package io.rdmaactors.jna;

import io.rdmaactors.conformance.SrqConformance;
import io.rdmaactors.verbs.Fabric;
import org.junit.jupiter.api.extension.ExtendWith;

/** The Srq conformance rules on rdma-core; skipped without an RDMA device. */
@ExtendWith({RequiresRdmaDevice.class, SoftRoceLimits.class})
class JnaSrqConformanceTest extends SrqConformance {

    @Override
    protected Fabric openFabric() {
        return JnaFabrics.openOrSkip();
    }
}
