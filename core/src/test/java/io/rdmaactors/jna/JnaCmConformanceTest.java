package io.rdmaactors.jna;

import io.rdmaactors.conformance.CmConformance;
import io.rdmaactors.verbs.Fabric;
import org.junit.jupiter.api.extension.ExtendWith;

/** The Cm conformance rules on rdma-core; skipped without an RDMA device. */
@ExtendWith({RequiresRdmaDevice.class, SoftRoceLimits.class})
class JnaCmConformanceTest extends CmConformance {

    @Override
    protected Fabric openFabric() {
        return JnaFabrics.openOrSkip();
    }
}
