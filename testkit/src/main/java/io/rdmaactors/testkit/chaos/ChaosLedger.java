package io.rdmaactors.testkit.chaos;

import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What a chaos run saw, written by every client at once: each request by its token until it is
 * answered, each connection attempt until it ends, and what broke an invariant.
 */
final class ChaosLedger {

    private final AtomicLong tokens = new AtomicLong();
    private final AtomicLong attempts = new AtomicLong();
    /** Token to the attempt that issued it, until answered. */
    private final Map<Long, Long> outstanding = new ConcurrentHashMap<>();
    private final Map<Long, AtomicInteger> endings = new ConcurrentHashMap<>();
    /** How far each attempt got, for the report of one that never ended. */
    private final Map<Long, String> stages = new ConcurrentHashMap<>();
    /** Attempts whose handler was crashed on purpose: nobody is left to hear their answers or their end. */
    private final Set<Long> crashed = ConcurrentHashMap.newKeySet();
    private final Map<String, AtomicInteger> faults = new ConcurrentHashMap<>();
    final AtomicLong issued = new AtomicLong();
    final AtomicLong answered = new AtomicLong();
    final AtomicLong failed = new AtomicLong();
    final AtomicLong duplicated = new AtomicLong();
    final AtomicLong corrupt = new AtomicLong();
    final AtomicLong abandoned = new AtomicLong();
    final AtomicLong doubleEndings = new AtomicLong();
    final AtomicLong bytesVerified = new AtomicLong();
    /** Chaos clients that stopped on an exception of their own. */
    final AtomicLong clientFailures = new AtomicLong();

    long newAttempt() {
        long a = attempts.incrementAndGet();
        endings.put(a, new AtomicInteger());
        stages.put(a, "connecting");
        return a;
    }

    long issue(long attempt) {
        long token = tokens.incrementAndGet();
        outstanding.put(token, attempt);
        issued.incrementAndGet();
        return token;
    }

    /** The one answer a request may get; a second is a duplicate. */
    void answer(long token, boolean success) {
        if (outstanding.remove(token) == null) {
            duplicated.incrementAndGet();
            return;
        }
        answered.incrementAndGet();
        if (!success) {
            failed.incrementAndGet();
        }
    }

    void reached(long attempt, String stage) {
        stages.put(attempt, stage);
    }

    void ended(long attempt) {
        stages.remove(attempt);
        if (endings.get(attempt).incrementAndGet() > 1) {
            doubleEndings.incrementAndGet();
        }
    }

    /** The handler of these attempts is about to crash: their requests and endings have no one to go to. */
    void crash(Set<Long> attempts) {
        crashed.addAll(attempts);
        outstanding.entrySet().removeIf(e -> {
            boolean mine = attempts.contains(e.getValue());
            if (mine) {
                abandoned.incrementAndGet();
            }
            return mine;
        });
    }

    void clientFailed() {
        clientFailures.incrementAndGet();
    }

    void corrupt() {
        corrupt.incrementAndGet();
    }

    void fault(String kind) {
        faults.computeIfAbsent(kind, k -> new AtomicInteger()).incrementAndGet();
    }

    long outstanding() {
        return outstanding.size();
    }

    long attempts() {
        return attempts.get();
    }

    /** Attempts, not crashed, that never heard ConnectFailed or Disconnected, by how far they got. */
    Map<String, Long> unended() {
        Map<String, Long> byStage = new TreeMap<>();
        endings.forEach((attempt, count) -> {
            if (count.get() == 0 && !crashed.contains(attempt)) {
                byStage.merge(stages.getOrDefault(attempt, "?"), 1L, Long::sum);
            }
        });
        return byStage;
    }

    Map<String, Integer> faults() {
        Map<String, Integer> m = new TreeMap<>();
        faults.forEach((k, v) -> m.put(k, v.get()));
        return m;
    }
}
