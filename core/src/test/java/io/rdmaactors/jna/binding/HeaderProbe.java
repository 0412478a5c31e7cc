package io.rdmaactors.jna.binding;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * What rdma-core's installed headers say a layout is: a C program of {@code printf("KEY %zu\n",
 * offsetof(...))} lines, compiled with gcc and run, read back as KEY to number. For the layout
 * tests of the jna and ffm bindings.
 */
public final class HeaderProbe {

    private HeaderProbe() {
    }

    /** Skips the test where libibverbs-dev and librdmacm-dev are not installed. */
    public static void assumeHeaders() {
        Assumptions.assumeTrue(Files.exists(Path.of("/usr/include/infiniband/verbs.h"))
                        && Files.exists(Path.of("/usr/include/rdma/rdma_cma.h")),
                "rdma-core headers are absent: install libibverbs-dev and librdmacm-dev to check struct layouts");
    }

    /**
     * Asserts that the headers give every key of {@code expected} its value, and no key more:
     * {@code main} prints each key and the header's number for it.
     *
     * @param binding whose numbers {@code expected} holds, for the message
     */
    public static void assertMatches(Path dir, Map<String, Long> expected, String main, String binding)
            throws IOException, InterruptedException {
        Map<String, Long> actual = run(dir, main);
        List<String> wrong = new ArrayList<>();
        expected.forEach((k, v) -> {
            if (!v.equals(actual.get(k))) {
                wrong.add(k + ": " + binding + " " + v + ", C " + actual.get(k));
            }
        });
        assertTrue(wrong.isEmpty(), "layouts differ from the headers: " + wrong);
        assertEquals(expected.keySet(), actual.keySet());
    }

    /** Compiles {@code main}'s body (the printf lines) in {@code dir}, runs it, and parses what it printed. */
    private static Map<String, Long> run(Path dir, String main) throws IOException, InterruptedException {
        Path c = dir.resolve("layout.c");
        Path exe = dir.resolve("layout");
        Files.writeString(c, "#include <stdio.h>\n#include <stddef.h>\n#include <rdma/rdma_cma.h>\n"
                + "int main(void) {\n" + main + "  return 0;\n}\n");
        exec(List.of("gcc", "-o", exe.toString(), c.toString()));
        Map<String, Long> map = new HashMap<>();
        for (String line : exec(List.of(exe.toString())).split("\n")) {
            int space = line.lastIndexOf(' ');
            if (space > 0) {
                map.put(line.substring(0, space), Long.parseLong(line.substring(space + 1).trim()));
            }
        }
        return map;
    }

    private static String exec(List<String> command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "timed out: " + command);
        assertEquals(0, p.exitValue(), command + " failed:\n" + out);
        return out;
    }
}
