package io.rdmaactors.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.rdmaactors.conformance.Loopback;
import io.rdmaactors.conformance.RcDataPathConformance;
import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.ResourceKind;
import org.junit.jupiter.api.Test;

/** {@link RcDataPathConformance} with its connections across a link, as between two processes. */
class SoftRcDataPathOverLinkConformanceTest extends RcDataPathConformance {

    @Override
    protected Fabric openFabric() {
        return OverLinks.fabric();
    }

    @Override
    protected boolean overLinks() {
        return true;
    }

    /** What makes the suites over links worth running: their loopback's QPs reach each other through a link. */
    @Test
    void theLoopbackCrossesALink() {
        try (Loopback loop = loopback().open()) {
            for (Loopback.Side side : new Loopback.Side[] {loop.a, loop.b}) {
                SoftQueuePair qp = (SoftQueuePair) side.qp;
                assertNotNull(qp.link, "QP " + qp.qpNum() + " sends over a link");
                assertNull(qp.remote, "QP " + qp.qpNum() + " has no peer in memory");
            }
            assertEquals(2, fabric.ledger().live(ResourceKind.LINK), "the connecting side's link and the accepted one");
        }
    }
}
