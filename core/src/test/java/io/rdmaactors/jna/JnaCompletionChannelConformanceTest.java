package io.rdmaactors.jna;

import io.rdmaactors.conformance.CompletionChannelConformance;
import io.rdmaactors.verbs.Fabric;
import org.junit.jupiter.api.extension.ExtendWith;

/** The CompletionChannel conformance rules on rdma-core; skipped without an RDMA device. */
@ExtendWith({RequiresRdmaDevice.class, SoftRoceLimits.class})
class JnaCompletionChannelConformanceTest extends CompletionChannelConformance {

    @Override
    protected Fabric openFabric() {
        return JnaFabrics.openOrSkip();
    }
}
