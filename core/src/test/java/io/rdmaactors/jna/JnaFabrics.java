package io.rdmaactors.jna;

import io.rdmaactors.verbs.Device;
import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.VerbsException;
import java.util.List;
import org.junit.jupiter.api.Assumptions;

/**
 * What the jna tests need to know about this machine: can the jna fabric open, with which devices.
 * The system property {@code rdma-actors.test.rdma-core-provider} names another provider over
 * rdma-core to run them on ({@code ffm}).
 */
final class JnaFabrics {

    static final String PROVIDER = System.getProperty("rdma-actors.test.rdma-core-provider", "jna");

    private static List<String> deviceNames;
    private static String unavailable;

    private JnaFabrics() {
    }

    /** Why the jna tests cannot run here, or null when a jna fabric opens with a device. */
    static synchronized String whyUnavailable() {
        if (deviceNames == null) {
            try (Fabric fabric = Fabric.open(PROVIDER)) {
                deviceNames = fabric.devices().stream().map(Device::name).toList();
                unavailable = deviceNames.isEmpty()
                        ? "no RDMA device on this machine (run native/run-in-softroce.sh)" : null;
            } catch (VerbsException e) {
                deviceNames = List.of();
                unavailable = "the " + PROVIDER + " fabric cannot open here: " + e.getMessage();
            }
        }
        return unavailable;
    }

    static synchronized List<String> deviceNames() {
        whyUnavailable();
        return deviceNames;
    }

    static Fabric openOrSkip() {
        String why = whyUnavailable();
        Assumptions.assumeTrue(why == null, why);
        return Fabric.open(PROVIDER);
    }
}
