package io.rdmaactors.jna;

import io.rdmaactors.conformance.ErrorSemanticsConformance;
import io.rdmaactors.verbs.Fabric;
import org.junit.jupiter.api.extension.ExtendWith;

/** The ErrorSemantics conformance rules on rdma-core; skipped without an RDMA device. */
@ExtendWith({RequiresRdmaDevice.class, SoftRoceLimits.class})
class JnaErrorSemanticsConformanceTest extends ErrorSemanticsConformance {

    @Override
    protected Fabric openFabric() {
        return JnaFabrics.openOrSkip();
    }
}
