package io.rdmaactors.bench;

import io.rdmaactors.testkit.RdmaTestKit;
import io.rdmaactors.testkit.chaos.ChaosRun;
import java.time.Duration;
import java.util.List;

/**
 * The chaos suite as a soak: {@code testkit}'s {@link ChaosRun} for as long as asked, with a
 * manager restart halfway, on the soft fabric; prints what it counted and exits 1 if a promise
 * broke (every request answered once, one ending per connection, data intact, no stall, nothing
 * left after shutdown).
 */
public final class ChaosSoak {

    private static final String USAGE = "usage: ChaosSoak [--seconds 600] [--connections 200] [--faults 14] [--seed N]";

    private ChaosSoak() {
    }

    public static void main(String[] args) {
        BenchSupport.Options options = new BenchSupport.Options(args, USAGE, "seconds", "connections", "faults",
                "seed");
        int seconds = options.integer("seconds", 600, 1);
        int connections = options.integer("connections", 200, 1);
        int faults = options.integer("faults", 14, 1);
        long seed = Long.parseLong(options.string("seed", Long.toString(System.nanoTime())));
        BenchSupport.runOrReport("ChaosSoak", () -> {
            ChaosRun.Report report;
            try (RdmaTestKit kit = RdmaTestKit.create()) {
                report = ChaosRun.run(kit, new ChaosRun.Settings(seed, connections, Duration.ofSeconds(seconds),
                        faults, true));
                kit.awaitNoLeaks(Duration.ofSeconds(60));
            } // closing the kit fails if a thread or a resource outlives the actor system
            List<String> violations = report.violations();
            System.out.println(report);
            System.out.println("SUMMARY ChaosSoak: " + (violations.isEmpty() ? "every promise held"
                    : "BROKEN: " + violations) + "; replay with --seed " + seed);
            if (!violations.isEmpty()) {
                System.exit(1);
            }
        });
    }
}
