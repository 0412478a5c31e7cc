package io.rdmaactors.soft;

import io.rdmaactors.verbs.Fabric;

/** {@link SoftQueuePairOverLinkConformanceTest} with its links' frames through shared memory, as between two processes of one host. */
class SoftQueuePairOverSharedMemoryConformanceTest extends SoftQueuePairOverLinkConformanceTest {

    @Override
    protected Fabric openFabric() {
        return OverLinks.sharedMemory();
    }
}
