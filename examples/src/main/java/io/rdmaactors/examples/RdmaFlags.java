package io.rdmaactors.examples;

import io.rdmaactors.verbs.Fabric;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The flags every program takes, spelled as rdma-core's examples and perftest spell them: -s
 * serves, -c connects to -a:-p, neither runs both roles in this process. -V is left to the
 * programs that verify (rping's meaning); the version is only --version.
 */
final class RdmaFlags {

    /** Which side of the connection this process plays. */
    enum Role { BOTH, SERVER, CLIENT }

    /** The port rping listens on by default; every program shares it, so -s and -c meet without -p. */
    static final int DEFAULT_PORT = 7174;

    @Spec(Spec.Target.MIXEE)
    CommandSpec spec;

    String fabric;
    String address;
    int port;

    @Option(names = {"-s", "--server"}, description = "serve: listen on -a:-p for clients from other processes")
    boolean server;

    @Option(names = {"-c", "--client"}, description = "connect to the server at -a:-p")
    boolean client;

    @Option(names = {"-v", "--verbose"}, description = "log, and show the stack trace of a failure")
    boolean verbose;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "show this help and exit")
    boolean help;

    @Option(names = "--version", versionHelp = true, description = "print the version and exit")
    boolean version;

    @Option(names = "--fabric", defaultValue = "soft",
            description = "soft (default, software RDMA), jna (rdma-core) or ffm (rdma-core through FFM: Java 22+"
                    + " and rdma-actors-ffm on the class path)")
    void fabric(String name) {
        if (!Fabric.providerNames().contains(name)) {
            throw usage(Fabric.missing(name));
        }
        fabric = name;
    }

    @Option(names = {"-a", "--address"}, defaultValue = "127.0.0.1",
            description = "the server's address: where -s listens, where -c connects (default ${DEFAULT-VALUE})")
    void address(String host) {
        inetAddress(host);
        address = host;
    }

    /** {@code host} as an address, or bad input: usage and exit 2. */
    InetAddress inetAddress(String host) {
        try {
            return InetAddress.getByName(host);
        } catch (UnknownHostException | SecurityException e) {
            throw usage("not an address: '" + host + "'");
        }
    }

    /** Bad input, to throw: picocli prints why and the usage, and exits 2. */
    ParameterException usage(String why) {
        return new ParameterException(spec.commandLine(), why);
    }

    @Option(names = {"-p", "--port"}, defaultValue = "" + DEFAULT_PORT,
            description = "the server's port (default ${DEFAULT-VALUE}; -s -p 0 takes a free one and prints it)")
    void port(int number) {
        if (number < 0 || number > 65535) {
            throw usage("-p must be a port, 0 to 65535, not " + number);
        }
        port = number;
    }

    Role role() {
        if (server && client) {
            throw usage("-s and -c exclude each other: give one, or neither to run both");
        }
        return server ? Role.SERVER : client ? Role.CLIENT : Role.BOTH;
    }

    /** Refuses -s and -c in a program that runs both roles in one process only. */
    void oneProcess() {
        if (role() != Role.BOTH) {
            throw usage(spec.name() + " runs server and client in one process:"
                    + " it takes neither -s nor -c");
        }
    }

    /** Where the server listens: -a:-p when serving alone, any free port when both roles share this process. */
    InetSocketAddress bind() {
        return new InetSocketAddress(address, role() == Role.SERVER ? port : 0);
    }

    /** Where a client of another process connects. */
    InetSocketAddress serverAddress() {
        return new InetSocketAddress(address, port);
    }

    /** Refuses {@code value} of {@code option} outside {@code min..max} as bad input: usage and exit 2. */
    void check(String option, long value, long min, long max) {
        if (value < min || value > max) {
            throw usage(option + " must be " + (max == Integer.MAX_VALUE
                    ? "at least " + min : "from " + min + " to " + max) + ", not " + value);
        }
    }
}
