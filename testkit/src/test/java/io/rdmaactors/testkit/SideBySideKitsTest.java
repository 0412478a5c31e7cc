package io.rdmaactors.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaactors.actors.RdmaProtocol;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Two kits in one JVM: each has its own fabric and threads, and closing one checks only its own. */
class SideBySideKitsTest {

    @Test
    void twoKitsRunSideBySideAndEachClosesCleanWhileTheOtherRuns() {
        try (RdmaTestKit second = RdmaTestKit.create()) {
            RdmaTestKit first = RdmaTestKit.create();
            RdmaTestKit.Listener firstListener = first.listen(4);
            RdmaTestKit.Listener secondListener = second.listen(4);
            RdmaTestKit.Pair a = echo(first, firstListener, "first");
            RdmaTestKit.Pair b = echo(second, secondListener, "second");
            assertNotSame(first.fabric(), second.fabric());
            List<String> firstThreads = first.threads();
            List<String> secondThreads = second.threads();
            assertFalse(firstThreads.isEmpty(), "the first kit's pumps and pollers");
            Set<String> both = new HashSet<>(firstThreads);
            both.retainAll(secondThreads);
            assertEquals(Set.of(), both, "no thread is counted for both kits");

            // closing the first checks its own threads and ledger while the second's run on
            first.close(a);
            first.unbind(firstListener);
            first.close();
            assertTrue(first.threads().isEmpty());
            assertEquals(secondThreads, second.threads(), "the second kit lost no thread");

            b.client().tell(RdmaProtocol.Send.of(new byte[] {2}, "still"));
            b.clientEvents().expectMessage(RdmaTestKit.STEP, new RdmaProtocol.Acked("still"));
            second.close(b);
            second.unbind(secondListener);
            second.awaitNoLeaks(RdmaTestKit.STEP);
        }
    }

    private static RdmaTestKit.Pair echo(RdmaTestKit kit, RdmaTestKit.Listener listener, String token) {
        RdmaTestKit.Pair pair = kit.connect(listener);
        pair.client().tell(RdmaProtocol.Send.of(new byte[] {1}, token));
        pair.clientEvents().expectMessage(RdmaTestKit.STEP, new RdmaProtocol.Acked(token));
        return pair;
    }
}
