package io.rdmaactors.jna.binding;

import java.lang.reflect.Field;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every offset and size the JNA structures use, checked against the real rdma-core headers with a
 * C program that gcc compiles here. Fields named {@code pad_*} stand for parts the provider never
 * touches; a partial struct is checked field by field but not for its size.
 */
class StructLayoutTest {

    private record Mirror(NativeLayout layout, String cType, boolean complete) {
    }

    private static final List<Mirror> MIRRORS = List.of(
            new Mirror(new IbvDeviceAttr(), "struct ibv_device_attr", true),
            new Mirror(new IbvPortAttr(), "struct ibv_port_attr", true),
            new Mirror(new IbvGlobalRoute(), "struct ibv_global_route", true),
            new Mirror(new IbvAhAttr(), "struct ibv_ah_attr", true),
            new Mirror(new IbvWc(), "struct ibv_wc", true),
            new Mirror(new IbvSge(), "struct ibv_sge", true),
            new Mirror(new IbvRecvWr(), "struct ibv_recv_wr", true),
            new Mirror(new IbvSendWr(), "struct ibv_send_wr", true),
            new Mirror(new IbvQpCap(), "struct ibv_qp_cap", true),
            new Mirror(new IbvQpInitAttr(), "struct ibv_qp_init_attr", true),
            new Mirror(new IbvQpAttr(), "struct ibv_qp_attr", true),
            new Mirror(new IbvSrqAttr(), "struct ibv_srq_attr", true),
            new Mirror(new IbvSrqInitAttr(), "struct ibv_srq_init_attr", true),
            new Mirror(new IbvAsyncEvent(), "struct ibv_async_event", true),
            new Mirror(new IbvContext(), "struct ibv_context", true),
            new Mirror(new IbvMr(), "struct ibv_mr", true),
            new Mirror(new IbvMw(), "struct ibv_mw", true),
            new Mirror(new IbvCompChannel(), "struct ibv_comp_channel", true),
            new Mirror(new IbvCq(), "struct ibv_cq", false),
            new Mirror(new IbvQp(), "struct ibv_qp", false),
            new Mirror(new RdmaEventChannel(), "struct rdma_event_channel", true),
            new Mirror(new RdmaCmId(), "struct rdma_cm_id", false),
            new Mirror(new RdmaConnParam(), "struct rdma_conn_param", true),
            new Mirror(new RdmaUdParam(), "struct rdma_ud_param", true),
            new Mirror(new RdmaCmEvent(), "struct rdma_cm_event", true),
            new Mirror(new RdmaAddrinfo(), "struct rdma_addrinfo", true));

    @TempDir
    Path dir;

    @Test
    void structuresMatchTheInstalledHeaders() throws Exception {
        HeaderProbe.assumeHeaders();
        Map<String, Long> expected = new LinkedHashMap<>();
        StringBuilder c = new StringBuilder();
        for (Mirror m : MIRRORS) {
            String name = m.cType().substring("struct ".length());
            if (m.complete()) {
                expected.put(name + " sizeof", (long) m.layout().size());
                c.append(String.format("  printf(\"%s sizeof %%zu\\n\", sizeof(%s));%n", name, m.cType()));
            }
            for (String path : paths(m.layout(), "")) {
                expected.put(name + " " + path, (long) m.layout().offsetOf(path));
                c.append(String.format("  printf(\"%s %s %%zu\\n\", offsetof(%s, %s));%n", name, path, m.cType(), path));
            }
        }
        HeaderProbe.assertMatches(dir, expected, c.toString(), "JNA");
    }

    /** The dotted paths of every named field, nested structs and unions included. */
    private static List<String> paths(NativeLayout layout, String prefix) throws ReflectiveOperationException {
        List<String> out = new ArrayList<>();
        for (String field : layout.fieldNames()) {
            if (field.startsWith("pad_")) {
                continue;
            }
            out.add(prefix + field);
            Field f = layout.getClass().getField(field);
            if (NativeLayout.class.isAssignableFrom(f.getType())) {
                out.addAll(paths((NativeLayout) f.get(layout), prefix + field + "."));
            }
        }
        return out;
    }
}
