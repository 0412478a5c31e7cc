package io.rdmaactors.jna;

import io.rdmaactors.conformance.RcDataPathConformance;
import io.rdmaactors.verbs.Fabric;
import org.junit.jupiter.api.extension.ExtendWith;

/** The RcDataPath conformance rules on rdma-core; skipped without an RDMA device. */
@ExtendWith({RequiresRdmaDevice.class, SoftRoceLimits.class})
class JnaRcDataPathConformanceTest extends RcDataPathConformance {

    @Override
    protected Fabric openFabric() {
        return JnaFabrics.openOrSkip();
    }
}
