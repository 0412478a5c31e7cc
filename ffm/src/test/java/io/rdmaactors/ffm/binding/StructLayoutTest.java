package io.rdmaactors.ffm.binding;

import io.rdmaactors.jna.binding.HeaderProbe;
import java.lang.foreign.StructLayout;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
            new Mirror(Structs.IBV_MW, true),
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
        HeaderProbe.assumeHeaders();
        Map<String, Long> expected = new LinkedHashMap<>();
        StringBuilder c = new StringBuilder();
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
        HeaderProbe.assertMatches(dir, expected, c.toString(), "FFM");
    }
}
