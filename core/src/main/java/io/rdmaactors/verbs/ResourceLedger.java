package io.rdmaactors.verbs;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLongArray;

/** Live resources by kind, counted by the provider that creates and destroys them. */
public final class ResourceLedger {

    private final AtomicLongArray live = new AtomicLongArray(ResourceKind.values().length);
    private final AtomicLongArray created = new AtomicLongArray(ResourceKind.values().length);

    public void opened(ResourceKind kind) {
        live.incrementAndGet(kind.ordinal());
        created.incrementAndGet(kind.ordinal());
    }

    public void closed(ResourceKind kind) {
        if (live.decrementAndGet(kind.ordinal()) < 0) {
            throw new IllegalStateException(kind + " closed more often than opened");
        }
    }

    public long live(ResourceKind kind) {
        return live.get(kind.ordinal());
    }

    /** Every resource of the kind ever opened, closed or not: what a step cost, beyond what it left. */
    public long created(ResourceKind kind) {
        return created.get(kind.ordinal());
    }

    public long total() {
        long total = 0;
        for (int i = 0; i < live.length(); i++) {
            total += live.get(i);
        }
        return total;
    }

    /** The kinds with live resources, for a failure message that says what leaked. */
    public Map<ResourceKind, Long> snapshot() {
        Map<ResourceKind, Long> map = new EnumMap<>(ResourceKind.class);
        for (ResourceKind kind : ResourceKind.values()) {
            long n = live.get(kind.ordinal());
            if (n != 0) {
                map.put(kind, n);
            }
        }
        return map;
    }

    @Override
    public String toString() {
        return "ResourceLedger" + snapshot();
    }
}
