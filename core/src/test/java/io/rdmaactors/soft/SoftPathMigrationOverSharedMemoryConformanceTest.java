package io.rdmaactors.soft;

import io.rdmaactors.verbs.Fabric;

/** {@link SoftPathMigrationOverLinkConformanceTest} with its links' frames through shared memory, as between two processes of one host. */
class SoftPathMigrationOverSharedMemoryConformanceTest extends SoftPathMigrationOverLinkConformanceTest {

    @Override
    protected Fabric openFabric() {
        return OverLinks.sharedMemory();
    }
}
