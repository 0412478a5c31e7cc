package io.rdmaactors.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.rdmaactors.actors.RdmaProtocol;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The README's example test, word for word but for the assumption that skips it on rdma-core (which
 * has no fault injection): it uses only the public API, as a user's test would.
 */
class ReadmeExampleTest {

    @Test
    void aKilledPeerEndsTheConnectionAsAFailure() {
        try (RdmaTestKit kit = RdmaTestKit.create()) {
            Assumptions.assumeTrue(kit.fabric().faults().isPresent(), "rdma-core has no fault injection");
            RdmaTestKit.Listener listener = kit.listen(8);
            RdmaTestKit.Pair pair = kit.connect(listener);

            pair.client().tell(RdmaProtocol.Send.of(ByteString.fromString("hello"), "hello"));
            RdmaProtocol.Received hello = pair.serverEvents().expectMessageClass(RdmaProtocol.Received.class,
                    RdmaTestKit.STEP);
            assertEquals("hello", hello.data().utf8String());
            pair.clientEvents().expectMessage(RdmaTestKit.STEP, new RdmaProtocol.Acked("hello"));

            // the client's process dies, as with kill -9: the server hears that it failed
            kit.killPeer(pair.serverConnected());
            RdmaProtocol.ErrorClosed failed = assertInstanceOf(RdmaProtocol.ErrorClosed.class,
                    RdmaTestKit.awaitDisconnected(pair.serverEvents()).reason());
            assertInstanceOf(RdmaProtocol.PeerFailed.class, failed.cause());

            pair.client().tell(new RdmaProtocol.Abort()); // the dead side's own end, which heard nothing
            RdmaTestKit.awaitDisconnected(pair.clientEvents());
            kit.unbind(listener);
            kit.awaitNoLeaks(RdmaTestKit.STEP);
        }
    }
}
