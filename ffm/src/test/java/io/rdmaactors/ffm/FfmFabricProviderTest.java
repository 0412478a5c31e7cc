package io.rdmaactors.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.FabricUnavailableException;
import org.junit.jupiter.api.Test;

/** The provider is found by its name; what it does on a device, the guest's suites check. */
class FfmFabricProviderTest {

    @Test
    void fabricOpenFindsItByName() {
        Fabric fabric;
        try {
            fabric = Fabric.open("ffm");
        } catch (FabricUnavailableException e) {
            assertFalse(e.getMessage().contains("no fabric provider"), "registered: " + e.getMessage());
            assumeTrue(false, "rdma-core is not installed here: " + e.getMessage());
            return;
        }
        try (fabric) {
            assertEquals("ffm", fabric.provider());
            assertEquals(0, fabric.ledger().total());
        }
    }
}
