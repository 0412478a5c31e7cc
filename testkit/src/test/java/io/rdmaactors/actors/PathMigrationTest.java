package io.rdmaactors.actors;

import static io.rdmaactors.actors.Connections.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaactors.actors.RdmaProtocol.ConnectionEvent;
import io.rdmaactors.testkit.RdmaTestKit;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Automatic path migration: an alternate path through port 2 takes over when port 1 is cut. */
class PathMigrationTest {

    private RdmaTestKit kit;

    @BeforeEach
    void start() {
        kit = RdmaTestKit.create();
    }

    @AfterEach
    void stop() {
        kit.close();
    }

    @Test
    void cuttingThePrimaryPortMigratesWithoutLosingAMessage() {
        // APM needs a second port and InfiniBand: the soft fabric has both, RoCE refuses alternate paths
        Connections.assumeFaultInjection(kit);
        RdmaTestKit.Listener listener = kit.listen(8);
        RdmaTestKit.Pair pair = kit.connect(listener);
        // port 2 of soft0 is 127.0.0.2: each side's alternate path leads to the other's port 2
        pair.client().tell(new RdmaProtocol.LoadAlternatePath(new InetSocketAddress("127.0.0.2", 0), 2));
        pair.server().tell(new RdmaProtocol.LoadAlternatePath(new InetSocketAddress("127.0.0.2", 0), 2));
        pair.clientEvents().expectMessageClass(RdmaProtocol.AlternatePathLoaded.class, WAIT);
        pair.serverEvents().expectMessageClass(RdmaProtocol.AlternatePathLoaded.class, WAIT);
        assertFalse(send(pair, 0, 50), "no migration while the primary path works");
        kit.faults().cutPort(kit.fabric().device("soft0"), 1);
        if (!send(pair, 50, 100)) {
            // the async event takes its own path (device pump, connection actor): it may trail the acks
            pair.clientEvents().expectMessageClass(RdmaProtocol.PathMigrated.class, WAIT);
        }

        List<Integer> received = new ArrayList<>();
        boolean serverMigrated = false;
        while (received.size() < 100 || !serverMigrated) {
            ConnectionEvent e = pair.serverEvents().receiveMessage(WAIT);
            if (e instanceof RdmaProtocol.Received r) {
                received.add(r.data().asByteBuffer().getInt());
            } else {
                serverMigrated |= e instanceof RdmaProtocol.PathMigrated;
            }
        }
        for (int n = 0; n < 100; n++) {
            assertEquals(n, received.get(n), "every message arrives once, in order");
        }
        kit.close(pair);
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    /** Sends each message and waits for its ack; true if PathMigrated came on the way. */
    @Test
    void migratePathMovesTrafficOnRequest() {
        Connections.assumeFaultInjection(kit);
        RdmaTestKit.Listener listener = kit.listen(8);
        RdmaTestKit.Pair pair = kit.connect(listener);
        pair.client().tell(new RdmaProtocol.MigratePath());
        RdmaProtocol.CommandFailed refused = pair.clientEvents().expectMessageClass(RdmaProtocol.CommandFailed.class,
                WAIT);
        assertTrue(refused.command() instanceof RdmaProtocol.MigratePath, "nothing to migrate to: " + refused);
        pair.client().tell(new RdmaProtocol.LoadAlternatePath(new InetSocketAddress("127.0.0.2", 0), 2));
        pair.clientEvents().expectMessageClass(RdmaProtocol.AlternatePathLoaded.class, WAIT);
        pair.client().tell(new RdmaProtocol.MigratePath());
        pair.clientEvents().expectMessageClass(RdmaProtocol.PathMigrated.class, WAIT);
        kit.faults().cutPort(kit.fabric().device("soft0"), 1);
        assertFalse(send(pair, 0, 20), "already on the alternate path: no further migration");
        assertEquals(20, pair.serverEvents().receiveSeveralMessages(20, WAIT).size());
        kit.close(pair);
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    private static boolean send(RdmaTestKit.Pair pair, int from, int to) {
        boolean migrated = false;
        for (int n = from; n < to; n++) {
            pair.client().tell(RdmaProtocol.Send.of(ByteBuffer.allocate(4).putInt(n).array(), n));
            ConnectionEvent e = pair.clientEvents().receiveMessage(WAIT);
            if (e instanceof RdmaProtocol.PathMigrated) {
                migrated = true;
                e = pair.clientEvents().receiveMessage(WAIT);
            }
            assertEquals(n, ((RdmaProtocol.Acked) e).token());
        }
        return migrated;
    }
}
