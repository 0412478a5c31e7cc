package io.rdmaactors.soft;

import io.rdmaactors.verbs.Fabric;

/** {@link SoftFaultInjectionOverLinkConformanceTest} with its links' frames through shared memory, as between two processes of one host. */
class SoftFaultInjectionOverSharedMemoryConformanceTest extends SoftFaultInjectionOverLinkConformanceTest {

    @Override
    protected Fabric openFabric() {
        return OverLinks.sharedMemory();
    }
}
