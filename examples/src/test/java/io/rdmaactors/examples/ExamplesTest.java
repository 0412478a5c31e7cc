package io.rdmaactors.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

/**
 * Every program runs to the end on the soft fabric; bad arguments get the usage and exit 2; the
 * client/server programs run as two processes; a client whose server dies says so in one line.
 * Behaviour only, never timing: the limits are generous for a slow, shared machine.
 */
class ExamplesTest {

    private static final long PROCESS_SECONDS = 180;
    private static final Pattern LISTENING = Pattern.compile("listening on ([0-9.]+):([0-9]+)");

    static Stream<Arguments> programs() {
        return Stream.of(
                Arguments.of((Object) new String[] {"ping-pong", "--count", "200"}),
                Arguments.of((Object) new String[] {"rping", "--count", "50", "--size", "64"}),
                Arguments.of((Object) new String[] {"devices"}),
                Arguments.of((Object) new String[] {"actor-ping-pong", "--count", "200", "--warm-up", "100"}),
                Arguments.of((Object) new String[] {"actor-ping-pong", "--zero-copy", "--size", "4096", "--count", "200",
                        "--warm-up", "100"}),
                Arguments.of((Object) new String[] {"blast", "--count", "2000", "--size", "256"}),
                Arguments.of((Object) new String[] {"rdma", "--size", "512"}),
                Arguments.of((Object) new String[] {"rdma", "--zero-copy", "--size", "65536"}),
                Arguments.of((Object) new String[] {"atomics", "--clients", "3", "--count", "20"}),
                Arguments.of((Object) new String[] {"multicast", "--count", "20"}),
                Arguments.of((Object) new String[] {"srq-server", "--messages", "10"}),
                Arguments.of((Object) new String[] {"apm", "--count", "40"}),
                Arguments.of((Object) new String[] {"supervised-server", "--clients", "9", "--seconds", "3"}),
                Arguments.of((Object) new String[] {"stream-echo", "--count", "2000", "--size", "1000"}),
                Arguments.of((Object) new String[] {"cluster-ping", "--members", "3", "--count", "200"}));
    }

    @ParameterizedTest
    @MethodSource("programs")
    void runsAndSucceeds(String[] args) {
        assertEquals(0, Main.commandLine().execute(args), String.join(" ", args));
    }

    /** The README's quick start: the report a new user sees first. */
    @Test
    void quickStartReportsPercentilesAndThroughput() {
        PrintStream out = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            assertEquals(0, Main.commandLine().execute("actor-ping-pong", "-C", "300", "-W", "200"));
        } finally {
            System.setOut(out);
        }
        String report = captured.toString(StandardCharsets.UTF_8);
        assertTrue(report.contains("actor-ping-pong: 300 round trips of 64 bytes after 200 to warm up, every byte"
                + " verified"), report);
        for (String figure : new String[] {"p50", "p90", "p99", "p99.9", "max", "msg/s", "MB/s"}) {
            assertTrue(report.contains(figure), figure + " missing from " + report);
        }
    }

    static Stream<Arguments> badArguments() {
        return Stream.of(
                Arguments.of((Object) new String[] {"ping-pong", "--count", "-5"}),
                Arguments.of((Object) new String[] {"ping-pong", "--size", "0"}),
                Arguments.of((Object) new String[] {"ping-pong", "-s", "-c"}),
                Arguments.of((Object) new String[] {"actor-ping-pong", "--fabric", "nosuch"}),
                Arguments.of((Object) new String[] {"actor-ping-pong", "-S", "3"}),
                Arguments.of((Object) new String[] {"actor-ping-pong", "--warm-up", "-1"}),
                Arguments.of((Object) new String[] {"actor-ping-pong", "-c", "-p", "70000"}),
                Arguments.of((Object) new String[] {"blast", "--count", "0"}),
                Arguments.of((Object) new String[] {"blast", "-S", "" + (Program.MAX_SIZE + 1)}),
                Arguments.of((Object) new String[] {"rping", "-c", "-a", "not..an..address"}),
                Arguments.of((Object) new String[] {"rping", "-S", "8"}),
                Arguments.of((Object) new String[] {"devices", "--fabric", "nosuch"}),
                Arguments.of((Object) new String[] {"rdma", "--size", "-1"}),
                Arguments.of((Object) new String[] {"atomics", "--clients", "0"}),
                Arguments.of((Object) new String[] {"multicast", "--size", "5000"}),
                Arguments.of((Object) new String[] {"srq-server", "--messages", "0"}),
                Arguments.of((Object) new String[] {"apm", "--count", "1"}),
                Arguments.of((Object) new String[] {"supervised-server", "--seconds", "0"}),
                Arguments.of((Object) new String[] {"stream-echo", "--count", "0"}),
                Arguments.of((Object) new String[] {"cluster-ping", "--members", "1"}),
                Arguments.of((Object) new String[] {"cluster-ping", "--port", "0", "--seed", "127.0.0.1:2552"}),
                Arguments.of((Object) new String[] {"cluster-ping", "--seed", "nohostnoport"}),
                Arguments.of((Object) new String[] {"rdma", "-s", "-c"}),
                Arguments.of((Object) new String[] {"rdma", "-c", "-p", "-1"}),
                Arguments.of((Object) new String[] {"atomics", "-c", "-C", "-3"}),
                Arguments.of((Object) new String[] {"srq-server", "--clients", "1001"}),
                Arguments.of((Object) new String[] {"apm", "-c", "--fabric", "nosuch"}),
                Arguments.of((Object) new String[] {"multicast", "-m", "10.0.0.1"}),
                Arguments.of((Object) new String[] {"multicast", "-b", "not..an..address"}),
                Arguments.of((Object) new String[] {"multicast", "-s", "--count", "0"}),
                Arguments.of((Object) new String[] {"multicast", "-c"}),
                Arguments.of((Object) new String[] {"supervised-server", "-s", "--status", "0"}),
                Arguments.of((Object) new String[] {"ping-pong", "--no-such-option"}));
    }

    @ParameterizedTest
    @MethodSource("badArguments")
    void badArgumentsGetTheUsageAndExit2(String[] args) {
        StringWriter err = new StringWriter();
        CommandLine line = Main.commandLine();
        line.setErr(new PrintWriter(err, true));
        assertEquals(2, line.execute(args), String.join(" ", args) + ": " + err);
        assertTrue(err.toString().contains("Usage:"), err.toString());
        assertFalse(err.toString().contains("\tat "), err.toString());
    }

    /** The examples do not carry the ffm module: asked for it, they say what it needs, in one line. */
    @Test
    void theFfmFabricWithoutItsModuleSaysWhatItNeeds() {
        StringWriter err = new StringWriter();
        CommandLine line = Main.commandLine();
        line.setErr(new PrintWriter(err, true));
        assertEquals(2, line.execute("devices", "--fabric", "ffm"), err.toString());
        assertTrue(err.toString().contains("the ffm provider needs Java 22 or newer"), err.toString());
    }

    /** -V is verify, as in rping; the version is --version only. */
    @Test
    void versionIsLongOnly() {
        StringWriter out = new StringWriter();
        CommandLine line = Main.commandLine();
        line.setOut(new PrintWriter(out, true));
        assertEquals(0, line.execute("--version"));
        assertTrue(out.toString().startsWith("rdma-actors"), out.toString());
        assertEquals(2, Main.commandLine().execute("-V"));
    }

    static Stream<Arguments> clientServer() {
        return Stream.of(
                Arguments.of("ping-pong", List.of("-C", "300"), List.of("contents verified", "msg/s"),
                        "echoed 300 messages"),
                Arguments.of("actor-ping-pong", List.of("-C", "300", "-W", "200"), List.of("every byte verified",
                        "msg/s"), "echoed 500 messages"),
                Arguments.of("actor-ping-pong", List.of("-Z", "-S", "2048", "-C", "300", "-W", "200"),
                        List.of("every byte verified, zero copy", "msg/s"), "echoed 500 messages of 2048 bytes"),
                Arguments.of("blast", List.of("-C", "2000", "-S", "256"), List.of("every message arrived once",
                        "msg/s"), "2000 messages of 256 bytes"),
                Arguments.of("stream-echo", List.of("-C", "3000", "-S", "512"), List.of("3000 messages of 512 bytes"
                        + " echoed", "msg/s"), "echoed one client's stream"),
                Arguments.of("rdma", List.of("-S", "512"), List.of("512 bytes RDMA-written, read back identical"),
                        "2 blocks of 512 bytes into its exported region"),
                Arguments.of("atomics", List.of("--clients", "3", "-C", "20"), List.of("every value from 0 to 119"
                        + " taken once"), "3 clients incremented its counter to 120"),
                Arguments.of("srq-server", List.of("--clients", "4", "-C", "10"), List.of("4 clients x 10 messages"),
                        "4 connections through one shared receive queue"),
                Arguments.of("apm", List.of("-C", "40"), List.of("port 1 cut after 20 of 40 messages; PathMigrated"),
                        "all 40 messages arrived once, in order"));
    }

    @ParameterizedTest
    @MethodSource("clientServer")
    void runsAsServerAndClientInTwoProcesses(String program, List<String> clientArgs, List<String> clientSays,
                                             String serverSays) throws Exception {
        Process server = start(program, "-s", "-p", "0");
        try {
            BufferedReader serverOut = reader(server);
            String port = awaitPort(serverOut);
            List<String> args = new ArrayList<>(List.of(program, "-c", "-p", port));
            args.addAll(clientArgs);
            Process client = start(args.toArray(String[]::new));
            CompletableFuture<String> clientOut = readAll(client);
            assertTrue(client.waitFor(PROCESS_SECONDS, TimeUnit.SECONDS), "the client did not end");
            String report = clientOut.get();
            assertEquals(0, client.exitValue(), report);
            assertTrue(clientSays.stream().allMatch(report::contains), report);
            CompletableFuture<String> rest = CompletableFuture.supplyAsync(() -> drain(serverOut));
            assertTrue(server.waitFor(PROCESS_SECONDS, TimeUnit.SECONDS), "the server did not end after its client");
            assertEquals(0, server.exitValue());
            assertTrue(rest.get().contains(serverSays), rest.get());
        } finally {
            server.destroyForcibly();
        }
    }

    /**
     * mckey's roles in two processes: the sender sends and ends; the receiver ends on its timeout,
     * in one line, because the soft fabric carries UD and multicast only within one process
     * (docs/soft-fabric.md, "Not modelled"). Both roles in one process are in runsAndSucceeds.
     */
    @Test
    void multicastRunsAsSenderAndReceiverInTwoProcesses() throws Exception {
        Process receiver = start("multicast", "-m", "239.1.2.4", "-b", "127.0.0.1", "-C", "20", "--timeout", "2");
        try {
            BufferedReader receiverOut = reader(receiver);
            String joined = firstLine(receiverOut);
            assertTrue(joined.contains("receiver: joined 239.1.2.4, waiting for 20 datagrams"), joined);
            Process sender = start("multicast", "-s", "-m", "239.1.2.4", "-b", "127.0.0.1", "-C", "20");
            CompletableFuture<String> senderOut = readAll(sender);
            assertTrue(sender.waitFor(PROCESS_SECONDS, TimeUnit.SECONDS), "the sender did not end");
            assertEquals(0, sender.exitValue(), senderOut.get());
            assertTrue(senderOut.get().contains("sender: 20 datagrams of 256 bytes sent to 239.1.2.4"), senderOut.get());
            CompletableFuture<String> rest = CompletableFuture.supplyAsync(() -> drain(receiverOut));
            assertTrue(receiver.waitFor(PROCESS_SECONDS, TimeUnit.SECONDS), "the receiver did not time out");
            String said = rest.get().strip();
            assertNotEquals(0, receiver.exitValue(), said);
            assertEquals(1, said.lines().count(), said);
            assertTrue(said.contains("of 20 datagrams arrived, then none for 2 s"), said);
        } finally {
            receiver.destroyForcibly();
        }
    }

    /** cluster-ping with a member per process: every pair's round trips, then each member leaves once its pairs are done. */
    @Test
    void clusterPingRunsAMemberPerProcess() throws Exception {
        Process first = start("cluster-ping", "--port", "0", "-n", "3", "-C", "100");
        List<Process> others = new ArrayList<>();
        try {
            BufferedReader firstOut = reader(first);
            String member = firstLine(firstOut);
            Matcher at = Pattern.compile("member pekko://cluster-ping@([0-9.]+:[0-9]+)").matcher(member);
            assertTrue(at.find(), member);
            for (int i = 0; i < 2; i++) {
                others.add(start("cluster-ping", "--seed", at.group(1), "-n", "3", "-C", "100"));
            }
            CompletableFuture<String> rest = CompletableFuture.supplyAsync(() -> drain(firstOut));
            List<CompletableFuture<String>> outs = others.stream().map(ExamplesTest::readAll).toList();
            for (Process p : others) {
                assertTrue(p.waitFor(PROCESS_SECONDS, TimeUnit.SECONDS), "a member did not end");
            }
            assertTrue(first.waitFor(PROCESS_SECONDS, TimeUnit.SECONDS), "the first member did not end");
            List<String> said = new ArrayList<>(List.of(rest.get()));
            for (CompletableFuture<String> out : outs) {
                said.add(out.get());
            }
            long pairs = 0;
            for (String out : said) {
                assertTrue(out.contains("left the cluster"), out);
                pairs += out.lines().filter(l -> l.contains("round trip latency")).count();
            }
            assertEquals(0, first.exitValue(), said.get(0));
            for (Process p : others) {
                assertEquals(0, p.exitValue(), String.join("\n", said));
            }
            assertEquals(3, pairs, "each of the 3 pairs reported once, by the member that pings: " + said);
        } finally {
            first.destroyForcibly();
            others.forEach(Process::destroyForcibly);
        }
    }

    /** A long-running server: serves a client process, prints status lines, and ends 0 on SIGTERM. */
    @Test
    void supervisedServerServesOtherProcessesAndStopsOnSigterm() throws Exception {
        Process server = start("supervised-server", "-s", "-p", "0", "--status", "1");
        try {
            BufferedReader serverOut = reader(server);
            String port = awaitPort(serverOut);
            Process client = start("supervised-server", "-c", "-p", port, "--clients", "6", "--seconds", "2");
            CompletableFuture<String> clientOut = readAll(client);
            assertTrue(client.waitFor(PROCESS_SECONDS, TimeUnit.SECONDS), "the client did not end");
            assertEquals(0, client.exitValue(), clientOut.get());
            assertTrue(clientOut.get().contains("served 6 clients"), clientOut.get());
            String status = firstLine(serverOut);
            assertTrue(status.matches(".*server: \\d+ connections open, \\d+ msg/s, \\d+ errors"), status);
            // SIGTERM, as Process.destroy() sends it; but that also closes the streams this test reads
            assertTrue(server.toHandle().destroy(), "no SIGTERM sent");
            CompletableFuture<String> rest = CompletableFuture.supplyAsync(() -> drain(serverOut));
            assertTrue(server.waitFor(PROCESS_SECONDS, TimeUnit.SECONDS), "the server did not end on SIGTERM");
            assertEquals(0, server.exitValue(), rest.get());
            assertTrue(rest.get().contains("stopped on SIGTERM") && rest.get().contains("served 6 clients"), rest.get());
        } finally {
            server.destroyForcibly();
        }
    }

    /** A server stopped by SIGTERM says so in one line, with its address, not as a failure of its listener. */
    @Test
    void aServerStoppedBySigtermSaysWhereItListened() throws Exception {
        Process server = start("actor-ping-pong", "-s", "-p", "0");
        try {
            BufferedReader serverOut = reader(server);
            String port = awaitPort(serverOut);
            // SIGTERM, as Process.destroy() sends it
            assertTrue(server.toHandle().destroy(), "no SIGTERM sent");
            CompletableFuture<String> rest = CompletableFuture.supplyAsync(() -> drain(serverOut));
            assertTrue(server.waitFor(PROCESS_SECONDS, TimeUnit.SECONDS), "the server did not end on SIGTERM");
            assertTrue(rest.get().contains("server on 127.0.0.1:" + port + ": stopped, the process is shutting down"),
                    rest.get());
            assertFalse(rest.get().contains("failed"), rest.get());
        } finally {
            server.destroyForcibly();
        }
    }

    /**
     * rping's complaint: a killed server gave its client a stack trace. Now one line, and a failed
     * exit: on the bare SPI and through the actors, whose connection ends as its peer's failure.
     */
    @ParameterizedTest
    @ValueSource(strings = {"ping-pong", "actor-ping-pong"})
    void aClientWhoseServerIsKilledSaysSoInOneLine(String program) throws Exception {
        Process server = start(program, "-s", "-p", "0");
        Process client = null;
        try {
            BufferedReader serverOut = reader(server);
            String port = awaitPort(serverOut);
            client = start(program, "-c", "-p", port, "-C", "2000000000");
            CompletableFuture<String> clientOut = readAll(client);
            String connected = firstLine(serverOut);
            assertTrue(connected.contains("connected"), connected);
            assertFalse(client.waitFor(1, TimeUnit.SECONDS), "the client ended before its server was killed");
            server.destroyForcibly();
            assertTrue(client.waitFor(PROCESS_SECONDS, TimeUnit.SECONDS), "the client did not notice");
            String said = clientOut.get().strip();
            assertNotEquals(0, client.exitValue(), said);
            assertEquals(1, said.lines().count(), said);
            assertTrue(said.contains("disconnected") || said.contains("peer closed") || said.contains("lost"), said);
        } finally {
            server.destroyForcibly();
            if (client != null) {
                client.destroyForcibly();
            }
        }
    }

    private static Process start(String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), Main.class.getName()));
        command.addAll(List.of(args));
        return new ProcessBuilder(command).redirectErrorStream(true).start();
    }

    private static BufferedReader reader(Process process) {
        return new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    }

    /** The port the server took (-p 0), from its first line. */
    private static String awaitPort(BufferedReader serverOut) throws Exception {
        String first = firstLine(serverOut);
        Matcher m = LISTENING.matcher(first);
        assertTrue(m.find(), "the server's first line: " + first);
        return m.group(2);
    }

    /** The next line a process prints, within the limit. */
    private static String firstLine(BufferedReader out) throws Exception {
        return String.valueOf(CompletableFuture.supplyAsync(() -> {
            try {
                return out.readLine();
            } catch (IOException e) {
                return String.valueOf(e);
            }
        }).get(PROCESS_SECONDS, TimeUnit.SECONDS));
    }

    private static CompletableFuture<String> readAll(Process process) {
        BufferedReader in = reader(process);
        return CompletableFuture.supplyAsync(() -> drain(in));
    }

    private static String drain(BufferedReader in) {
        StringBuilder all = new StringBuilder();
        try {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                all.append(line).append('\n');
            }
        } catch (IOException e) {
            all.append(e);
        }
        return all.toString();
    }
}
