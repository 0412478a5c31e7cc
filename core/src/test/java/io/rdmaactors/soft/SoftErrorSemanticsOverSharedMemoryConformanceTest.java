package io.rdmaactors.soft;

import io.rdmaactors.verbs.Fabric;

/** {@link SoftErrorSemanticsOverLinkConformanceTest} with its links' frames through shared memory, as between two processes of one host. */
class SoftErrorSemanticsOverSharedMemoryConformanceTest extends SoftErrorSemanticsOverLinkConformanceTest {

    @Override
    protected Fabric openFabric() {
        return OverLinks.sharedMemory();
    }
}
