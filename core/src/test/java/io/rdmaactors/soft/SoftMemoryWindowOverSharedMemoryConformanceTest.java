package io.rdmaactors.soft;

import io.rdmaactors.verbs.Fabric;

/** {@link SoftMemoryWindowOverLinkConformanceTest} with its links' frames through shared memory, as between two processes of one host. */
class SoftMemoryWindowOverSharedMemoryConformanceTest extends SoftMemoryWindowOverLinkConformanceTest {

    @Override
    protected Fabric openFabric() {
        return OverLinks.sharedMemory();
    }
}
