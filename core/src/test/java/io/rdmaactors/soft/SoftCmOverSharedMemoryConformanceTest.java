package io.rdmaactors.soft;

import io.rdmaactors.verbs.Fabric;

/** {@link SoftCmOverLinkConformanceTest} with its links' frames through shared memory, as between two processes of one host. */
class SoftCmOverSharedMemoryConformanceTest extends SoftCmOverLinkConformanceTest {

    @Override
    protected Fabric openFabric() {
        return OverLinks.sharedMemory();
    }
}
