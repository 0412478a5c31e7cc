package io.rdmaactors.soft;

import io.rdmaactors.verbs.Fabric;

/** {@link SoftSrqOverLinkConformanceTest} with its links' frames through shared memory, as between two processes of one host. */
class SoftSrqOverSharedMemoryConformanceTest extends SoftSrqOverLinkConformanceTest {

    @Override
    protected Fabric openFabric() {
        return OverLinks.sharedMemory();
    }
}
