package io.rdmaactors.soft;

import io.rdmaactors.verbs.Fabric;
import java.util.Map;

/**
 * The soft fabric of the conformance suites run over links: every connection the CM makes, in
 * this JVM too, crosses a TCP link as between two processes. The UD multicast suite stays in
 * memory: UD datagrams do not cross links.
 */
final class OverLinks {

    private OverLinks() {
    }

    static Fabric fabric() {
        return Fabric.open("soft", Map.of("transport", "tcp"));
    }
}
