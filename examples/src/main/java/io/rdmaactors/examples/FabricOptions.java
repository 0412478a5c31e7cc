package io.rdmaactors.examples;

import java.net.InetSocketAddress;
import picocli.CommandLine.Option;

/** The options every actor program shares: which fabric rdma-actors opens, and where servers listen. */
final class FabricOptions {

    @Option(names = "--fabric", defaultValue = "soft",
            description = "soft (default) or jna; sets rdma-actors.fabric")
    String fabric;

    @Option(names = "--address", defaultValue = "127.0.0.1", description = "the address servers listen on")
    String address;

    /** Where a server listens: the chosen address, any free port. */
    InetSocketAddress bind() {
        return new InetSocketAddress(address, 0);
    }
}
