package io.rdmaactors.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaactors.conformance.Loopback;
import io.rdmaactors.verbs.Fabric;
import org.junit.jupiter.api.Test;

/** {@link SoftRcDataPathOverLinkConformanceTest} with its links' frames through shared memory, as between two processes of one host. */
class SoftRcDataPathOverSharedMemoryConformanceTest extends SoftRcDataPathOverLinkConformanceTest {

    @Override
    protected Fabric openFabric() {
        return OverLinks.sharedMemory();
    }

    @Test
    void theLoopbacksLinksGoThroughSharedMemory() {
        try (Loopback loop = loopback().open()) {
            for (Loopback.Side side : new Loopback.Side[] {loop.a, loop.b}) {
                assertTrue(((SoftQueuePair) side.qp).link.link.sharesMemory(), "QP " + side.qp.qpNum() + "'s link");
            }
            assertEquals(2, ((SoftFabric) fabric).links.sharingMemory(), "the connecting side's link and the accepted one");
        }
    }
}
