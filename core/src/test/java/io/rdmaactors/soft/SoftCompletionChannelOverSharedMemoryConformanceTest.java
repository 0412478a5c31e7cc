package io.rdmaactors.soft;

import io.rdmaactors.verbs.Fabric;

/** {@link SoftCompletionChannelOverLinkConformanceTest} with its links' frames through shared memory, as between two processes of one host. */
class SoftCompletionChannelOverSharedMemoryConformanceTest extends SoftCompletionChannelOverLinkConformanceTest {

    @Override
    protected Fabric openFabric() {
        return OverLinks.sharedMemory();
    }
}
