package io.rdmaactors.examples;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The rdma-actors command line: one subcommand per classic RDMA program. */
@Command(name = "rdma-actors", mixinStandardHelpOptions = true,
        description = "Classic RDMA programs on rdma-actors; the soft fabric is the default, --fabric jna the real stack.",
        subcommands = {PingPong.class, Rping.class, Devices.class, ActorPingPong.class, Blast.class, RdmaReadWrite.class,
                Atomics.class, Multicast.class, SrqServer.class, PathMigration.class, SupervisedServer.class})
public final class Main implements Runnable {

    public static void main(String[] args) {
        System.exit(new CommandLine(new Main()).execute(args));
    }

    @Override
    public void run() {
        new CommandLine(this).usage(System.out);
    }
}
