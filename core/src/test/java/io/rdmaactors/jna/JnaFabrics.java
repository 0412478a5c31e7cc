package io.rdmaactors.jna;

import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.VerbsException;
import org.junit.jupiter.api.Assumptions;

/** Opens the jna fabric for a test, or skips the test where rdma-core or an RDMA device is missing. */
final class JnaFabrics {

    private JnaFabrics() {
    }

    static Fabric openOrSkip() {
        Fabric fabric;
        try {
            fabric = Fabric.open("jna");
        } catch (VerbsException e) {
            return Assumptions.abort("the jna fabric cannot open here: " + e.getMessage());
        }
        if (fabric.devices().isEmpty()) {
            fabric.close();
            return Assumptions.abort("no RDMA device on this machine (run native/run-in-softroce.sh)");
        }
        return fabric;
    }
}
