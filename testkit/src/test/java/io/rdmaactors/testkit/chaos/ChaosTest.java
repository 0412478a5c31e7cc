package io.rdmaactors.testkit.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rdmaactors.testkit.RdmaTestKit;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The chaos suite, bounded for {@code mvn verify}: 40 connections for 15 s under 10 faults a
 * second of every kind, a manager restart halfway. {@code bench}'s {@code ChaosSoak} runs the same
 * for as long as asked. Replay a failure with {@code -Drdma-actors.chaos.seed=N}. Twice on the
 * soft fabric: its connections in memory, then across links through shared memory, as between
 * two processes of one host.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ChaosTest {

    @ParameterizedTest(name = "transport = {0}")
    @ValueSource(strings = {"auto", "shm"})
    void everyRequestIsAnsweredOnceAndEveryByteArrivesIntactWhileFaultsRain(String transport) throws Exception {
        try (RdmaTestKit kit = RdmaTestKit.create("rdma-actors.fabric-options.transport = " + transport)) {
            Assumptions.assumeTrue(kit.fabric().faults().isPresent(),
                    "the " + kit.fabric().provider() + " fabric has no fault injection");
            long seed = Long.getLong("rdma-actors.chaos.seed", System.nanoTime());
            ChaosRun.Report report = ChaosRun.run(kit, new ChaosRun.Settings(seed, 40, Duration.ofSeconds(15), 10,
                    true));
            System.out.println(report);
            assertEquals(List.of(), report.violations(), report.toString());
            kit.awaitNoLeaks(Duration.ofSeconds(30));
        } // closing the kit fails if an rdma-actors thread or a resource outlives it
    }
}
