package io.rdmaactors.examples;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;

/**
 * What a program prints at the end, as perftest prints it: latency percentiles of each operation
 * and the throughput of the run; and, on a terminal, a progress line while a long run goes on.
 */
final class Report {

    /** Round trips longer than this are recorded as this: a stuck peer fails the run long before. */
    private static final long HIGHEST_NANOS = TimeUnit.MINUTES.toNanos(1);

    private final Histogram latencies = new Histogram(HIGHEST_NANOS, 3);

    /** Records one operation that took {@code nanos}. */
    void record(long nanos) {
        latencies.recordValue(Math.min(nanos, HIGHEST_NANOS));
    }

    /**
     * Forgets what was recorded. A warm-up records as the measured run does and is then forgotten:
     * had it skipped recording, the measured run would start on code the JIT never saw run, and
     * recompile it while it is being timed.
     */
    void reset() {
        latencies.reset();
    }

    /** "round trip us: p50 ... max ... mean ...", microseconds with one decimal. */
    String latency(String operation) {
        return String.format("  %s latency (us): p50 %.1f  p90 %.1f  p99 %.1f  p99.9 %.1f  max %.1f  mean %.1f",
                operation, us(latencies.getValueAtPercentile(50)), us(latencies.getValueAtPercentile(90)),
                us(latencies.getValueAtPercentile(99)), us(latencies.getValueAtPercentile(99.9)),
                us(latencies.getMaxValue()), latencies.getMean() / 1e3);
    }

    /** "throughput: N msg/s, M MB/s (n messages in s s)"; MB are 10^6 bytes, as perftest's. */
    static String throughput(long messages, long messageBytes, long nanos) {
        double seconds = nanos / 1e9;
        return String.format("  throughput: %.0f msg/s, %.2f MB/s (%d messages of %d bytes in %.2f s)",
                messages / seconds, messages * (double) messageBytes / seconds / 1e6, messages, messageBytes, seconds);
    }

    private static double us(long nanos) {
        return nanos / 1e3;
    }

    /**
     * A line on the terminal, rewritten every second once a run has gone on for a few: how far it
     * is and at what rate. Nothing where there is no terminal (a pipe, a test, a log file).
     */
    static final class Progress implements AutoCloseable {
        private static final long FIRST_AFTER_SECONDS = 3;

        private final AtomicLong done = new AtomicLong();
        private final ScheduledExecutorService printer;

        private Progress(String what, long total) {
            if (System.console() == null) {
                printer = null;
                return;
            }
            printer = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "progress");
                t.setDaemon(true);
                return t;
            });
            long start = System.nanoTime();
            printer.scheduleAtFixedRate(() -> {
                long now = done.get();
                double seconds = (System.nanoTime() - start) / 1e9;
                System.err.printf("\r%s: %d of %d (%d%%), %.0f/s   ", what, now, total, 100 * now / total,
                        now / seconds);
            }, FIRST_AFTER_SECONDS, 1, TimeUnit.SECONDS);
        }

        static Progress of(String what, long total) {
            return new Progress(what, total);
        }

        void advance() {
            done.incrementAndGet();
        }

        /** Stops printing and clears the line, so the report starts at the left margin. */
        @Override
        public void close() {
            if (printer != null) {
                printer.shutdownNow();
                System.err.print("\r" + " ".repeat(79) + "\r");
            }
        }
    }
}
