package io.rdmaactors.actors;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * SIGTERM of a process that listens through rdma-actors, with or without a connection: it exits
 * promptly whatever its actors do with the endings they hear, not after coordinated shutdown's
 * 15 s JVM hook timeout (a guardian that stops itself on Unbound made it wait for that).
 */
class SigtermTest {

    /** Far below the 15 s a hung coordinated shutdown took, with room for a busy machine's JVM exit. */
    private static final long EXIT_SECONDS = 5;

    @ParameterizedTest
    @CsvSource({"stop-on-unbound, listening", "ignore-unbound, listening", "stop-on-unbound, connected",
        "ignore-unbound, connected"})
    void aListeningProcessExitsPromptlyOnSigterm(String guardian, String state) throws Exception {
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        Process process = new ProcessBuilder(List.of(java, "-cp", System.getProperty("java.class.path"),
                "-Xmx128m", ListeningProcess.class.getName(), guardian, state)).redirectErrorStream(true).start();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8));
            StringBuilder said = new StringBuilder();
            for (String line; (line = out.readLine()) != null && !line.equals("READY"); ) {
                said.append(line).append('\n');
            }
            assertTrue(process.isAlive(), "the process never got ready:\n" + said);
            Thread drain = new Thread(() -> {
                try {
                    out.lines().forEach(line -> said.append(line).append('\n'));
                } catch (java.io.UncheckedIOException closed) {
                    // the process's output closed with it
                }
            });
            drain.setDaemon(true);
            drain.start();
            long signalled = System.nanoTime();
            process.destroy(); // SIGTERM
            assertTrue(process.waitFor(EXIT_SECONDS, TimeUnit.SECONDS), "still running " + EXIT_SECONDS
                    + " s after SIGTERM:\n" + said);
            System.out.printf("%s, %s: exited %d ms after SIGTERM, status %d%n", guardian, state,
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - signalled), process.exitValue());
            drain.join(1000);
            assertTrue(!said.toString().contains("timed out"), said.toString());
        } finally {
            process.destroyForcibly();
        }
    }
}
