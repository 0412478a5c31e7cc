package io.rdmaactors.examples;

import io.rdmaactors.verbs.VerbsException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParseResult;

/** The rdma-actors command line: one subcommand per classic RDMA program. */
@Command(name = "rdma-actors", versionProvider = Main.Version.class,
        description = "Classic RDMA programs on rdma-actors; the soft fabric is the default, --fabric jna the real stack.",
        subcommands = {PingPong.class, Rping.class, Devices.class, ActorPingPong.class, Blast.class, RdmaReadWrite.class,
                Atomics.class, Multicast.class, SrqServer.class, PathMigration.class, SupervisedServer.class,
                StreamEcho.class, ClusterPing.class})
public final class Main implements Runnable {

    // no -V: in rdma-core's programs it means verify
    @Option(names = {"-h", "--help"}, usageHelp = true, description = "show this help and exit")
    boolean help;

    @Option(names = "--version", versionHelp = true, description = "print the version and exit")
    boolean version;

    /** The system property logback.xml reads for the root level: quiet unless -v. */
    private static final String LOG_LEVEL = "rdma-actors.log";

    public static void main(String[] args) {
        Sigterm.exit(commandLine().execute(args));
    }

    /**
     * The command line as users get it: bad arguments print the usage and exit 2 (picocli's
     * default); a failure prints one line and exits 1, with its stack trace only under -v.
     */
    static CommandLine commandLine() {
        CommandLine line = new CommandLine(new Main());
        line.setExecutionStrategy(parsed -> {
            if (verbose(parsed)) {
                System.setProperty(LOG_LEVEL, "INFO");
            }
            return new CommandLine.RunLast().execute(parsed);
        });
        line.setExecutionExceptionHandler((failure, command, parsed) -> {
            command.getErr().println(command.getCommandName() + " failed: " + oneLine(failure));
            if (verbose(parsed)) {
                failure.printStackTrace(command.getErr());
            }
            command.getErr().flush();
            return 1;
        });
        return line;
    }

    private static String oneLine(Exception failure) {
        if (failure instanceof VerbsException v && v.errno() == VerbsException.ENODEV) {
            return Program.noDevice("jna") + " (" + v.getMessage() + ")";
        }
        return failure instanceof Program.Failure || failure.getMessage() != null ? failure.getMessage()
                : failure.toString();
    }

    private static boolean verbose(ParseResult parsed) {
        ParseResult last = parsed;
        while (last.hasSubcommand()) {
            last = last.subcommand();
        }
        return last.hasMatchedOption("-v");
    }

    @Override
    public void run() {
        new CommandLine(this).usage(System.out);
    }

    /** The version Maven wrote into the jar's manifest. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String version = Main.class.getPackage().getImplementationVersion();
            return new String[] {"rdma-actors " + (version == null ? "(built outside a jar)" : version)};
        }
    }
}
