package io.rdmaactors.soft;

import io.rdmaactors.verbs.Fabric;
import java.util.Map;

/**
 * The soft fabric of the conformance suites run over links: every connection the CM makes, in
 * this JVM too, crosses a link as between two processes, through TCP or through shared memory
 * (the {@code Soft*OverSharedMemoryConformanceTest} classes). The UD multicast suite stays in
 * memory: UD datagrams do not cross links.
 */
final class OverLinks {

    private OverLinks() {
    }

    static Fabric fabric() {
        return Fabric.open("soft", Map.of("transport", "tcp"));
    }

    static Fabric sharedMemory() {
        return Fabric.open("soft", Map.of("transport", "shm"));
    }
}
