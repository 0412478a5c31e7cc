package io.rdmaactors.ffm.binding;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.StructLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every offset and size of the FFM layouts, checked against the real rdma-core headers with a C
 * program that gcc compiles here. A partial struct is checked member by member, not for its size.
 */
class StructLayoutTest {

    private record Mirror(StructLayout layout, boolean complete) {
    }

    private static final List<Mirror> MIRRORS = List.of(
            new Mirror(Structs.IBV_DEVICE_ATTR, true),
            new Mirror(Structs.IBV_PORT_ATTR, true),
            new Mirror(Structs.IBV_GLOBAL_ROUTE, true),
            new Mirror(Structs.IBV_AH_ATTR, true),
            new Mirror(Structs.IBV_WC, true),
            new Mirror(Structs.IBV_SGE, true),
            new Mirror(Structs.IBV_RECV_WR, true),
            new Mirror(Structs.IBV_SEND_WR, true),
            new Mirror(Structs.IBV_QP_CAP, true),
            new Mirror(Structs.IBV_QP_INIT_ATTR, true),
            new Mirror(Structs.IBV_QP_ATTR, true),
            new Mirror(Structs.IBV_SRQ_ATTR, true),
            new Mirror(Structs.IBV_SRQ_INIT_ATTR, true),
            new Mirror(Structs.IBV_ASYNC_EVENT, true),
            new Mirror(Structs.IBV_CONTEXT, true),
            new Mirror(Structs.IBV_MR, true),
            new Mirror(Structs.IBV_COMP_CHANNEL, true),
            new Mirror(Structs.IBV_CQ, false),
            new Mirror(Structs.IBV_QP, false),
            new Mirror(Structs.RDMA_EVENT_CHANNEL, true),
            new Mirror(Structs.RDMA_CM_ID, false),
            new Mirror(Structs.RDMA_CONN_PARAM, true),
            new Mirror(Structs.RDMA_UD_PARAM, true),
            new Mirror(Structs.RDMA_CM_EVENT, true),
            new Mirror(Structs.RDMA_ADDRINFO, true));

    @TempDir
    Path dir;

    @Test
    void layoutsMatchTheInstalledHeaders() throws Exception {
        Assumptions.assumeTrue(Files.exists(Path.of("/usr/include/infiniband/verbs.h"))
                        && Files.exists(Path.of("/usr/include/rdma/rdma_cma.h")),
                "rdma-core headers are absent: install libibverbs-dev and librdmacm-dev to check struct layouts");
        Map<String, Long> expected = new LinkedHashMap<>();
        StringBuilder c = new StringBuilder("#include <stdio.h>\n#include <stddef.h>\n#include <rdma/rdma_cma.h>\n"
                + "int main(void) {\n");
        for (Mirror m : MIRRORS) {
            String name = m.layout().name().orElseThrow();
            if (m.complete()) {
                expected.put(name + " sizeof", m.layout().byteSize());
                c.append(String.format("  printf(\"%s sizeof %%zu\\n\", sizeof(struct %s));%n", name, name));
            }
            for (String path : CLayout.paths(m.layout())) {
                expected.put(name + " " + path, CLayout.offset(m.layout(), path));
                c.append(String.format("  printf(\"%s %s %%zu\\n\", offsetof(struct %s, %s));%n", name, path, name,
                        path));
            }
        }
        c.append("  return 0;\n}\n");
        Map<String, Long> actual = parse(compileAndRun(c.toString()));
        List<String> wrong = new ArrayList<>();
        expected.forEach((k, v) -> {
            if (!v.equals(actual.get(k))) {
                wrong.add(k + ": FFM " + v + ", C " + actual.get(k));
            }
        });
        assertTrue(wrong.isEmpty(), "layouts differ from the headers: " + wrong);
        assertEquals(expected.keySet(), actual.keySet());
    }

    private String compileAndRun(String source) throws IOException, InterruptedException {
        Path c = dir.resolve("layout.c");
        Path exe = dir.resolve("layout");
        Files.writeString(c, source);
        run(List.of("gcc", "-o", exe.toString(), c.toString()));
        return run(List.of(exe.toString()));
    }

    private static String run(List<String> command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "timed out: " + command);
        assertEquals(0, p.exitValue(), command + " failed:\n" + out);
        return out;
    }

    private static Map<String, Long> parse(String output) {
        Map<String, Long> map = new HashMap<>();
        for (String line : output.split("\n")) {
            int space = line.lastIndexOf(' ');
            if (space > 0) {
                map.put(line.substring(0, space), Long.parseLong(line.substring(space + 1).trim()));
            }
        }
        return map;
    }
}
