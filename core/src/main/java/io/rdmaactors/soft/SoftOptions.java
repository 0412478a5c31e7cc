package io.rdmaactors.soft;

import io.rdmaactors.soft.link.LinkCookie;
import io.rdmaactors.soft.link.LinkOptions;
import io.rdmaactors.verbs.InvalidRequestException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The soft fabric's options, read from the map {@code Fabric.open} takes (under
 * {@code rdma-actors.fabric-options} in the configuration, where reference.conf lists each with
 * its default): a bad value or an unknown key fails the open, naming the key.
 *
 * @param devices      devices, each with two ports ({@code devices}, 1 to 255)
 * @param cmTimeoutMs  how long the CM waits for the peer's answer to a REQ, REP or DREQ ({@code cm.timeout.ms})
 * @param timewaitMs   how long a disconnected id waits before TIMEWAIT_EXIT ({@code cm.timewait.ms})
 * @param threadsPrefix what its threads' names start with before the fabric's id ({@code threads.prefix})
 * @param localTransport false with {@code transport} {@code tcp} or {@code shm}: ids of one JVM meet over a link too
 * @param asyncWire    false with {@code wire = sync}: a request between QPs of one JVM runs inside its post
 * @param links        the links between processes' options
 */
record SoftOptions(int devices, long cmTimeoutMs, long timewaitMs, String threadsPrefix, boolean localTransport,
                          boolean asyncWire, LinkOptions links) {

    /** Every key and its default; {@code cookie} has none (the file in the user's home). */
    static final Map<String, String> DEFAULTS = defaults();

    private static Map<String, String> defaults() {
        Map<String, String> d = new LinkedHashMap<>();
        d.put("devices", "1");
        d.put("cm.timeout.ms", "2000");
        d.put("cm.timewait.ms", "50");
        d.put("threads.prefix", "rdma-");
        d.put("transport", "auto");
        d.put("wire", "async");
        d.put("io.threads", "2");
        d.put("links.handshake.timeout.ms", "5000");
        d.put("links.pending", "64");
        d.put("links.max", "1024");
        d.put("links.shm.bytes", String.valueOf(1 << 18));
        return d;
    }

    /** The options {@code given} sets, the defaults for the rest. */
    static SoftOptions from(Map<String, String> given) {
        Set<String> unknown = new TreeSet<>(given.keySet());
        unknown.removeAll(DEFAULTS.keySet());
        unknown.remove(LinkCookie.OPTION);
        if (!unknown.isEmpty()) {
            throw new InvalidRequestException("Fabric.open", "unknown soft fabric option " + unknown + "; known: "
                    + DEFAULTS.keySet() + " and " + LinkCookie.OPTION);
        }
        Map<String, String> o = new LinkedHashMap<>(DEFAULTS);
        o.putAll(given);
        return new SoftOptions((int) number(o, "devices", 1, 255), number(o, "cm.timeout.ms", 1, Integer.MAX_VALUE),
                number(o, "cm.timewait.ms", 0, Integer.MAX_VALUE), o.get("threads.prefix"),
                oneOf(o, "transport", "auto", "tcp", "shm").equals("auto"),
                oneOf(o, "wire", "async", "sync").equals("async"),
                new LinkOptions((int) number(o, "io.threads", 1, 256), o.get(LinkCookie.OPTION),
                        number(o, "links.handshake.timeout.ms", 1, Integer.MAX_VALUE),
                        (int) number(o, "links.pending", 1, Integer.MAX_VALUE),
                        (int) number(o, "links.max", 1, Integer.MAX_VALUE),
                        !o.get("transport").equals("tcp"), ringBytes(o)));
    }

    private static int ringBytes(Map<String, String> options) {
        long n = number(options, "links.shm.bytes", 4096, 1 << 30);
        if (Long.bitCount(n) != 1) {
            throw bad("links.shm.bytes", options.get("links.shm.bytes"), "a power of two from 4096 to " + (1 << 30));
        }
        return (int) n;
    }

    private static long number(Map<String, String> options, String key, long min, long max) {
        String value = options.get(key);
        try {
            long n = Long.parseLong(value.trim());
            if (n >= min && n <= max) {
                return n;
            }
        } catch (NumberFormatException e) {
            // named below
        }
        throw bad(key, value, "a whole number from " + min + " to " + max);
    }

    private static String oneOf(Map<String, String> options, String key, String... allowed) {
        String value = options.get(key);
        if (!List.of(allowed).contains(value)) {
            throw bad(key, value, String.join(" or ", allowed));
        }
        return value;
    }

    private static InvalidRequestException bad(String key, String value, String rule) {
        return new InvalidRequestException("Fabric.open", "soft fabric option " + key + " = " + value + ": must be "
                + rule);
    }
}
