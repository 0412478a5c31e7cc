package io.rdmaactors.actors;

import static io.rdmaactors.actors.Connections.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.rdmaactors.actors.RdmaProtocol.ConnectionEvent;
import io.rdmaactors.cm.CmEventType;
import io.rdmaactors.testkit.RdmaTestKit;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The test kit aims faults at a connection by what its Connected said, as a user test holds it. */
class ConnectionFaultsTest {

    private RdmaTestKit kit;

    @BeforeEach
    void start() {
        kit = RdmaTestKit.create();
        Connections.assumeFaultInjection(kit);
    }

    @AfterEach
    void stop() {
        kit.close();
    }

    @Test
    void aKilledPeerEndsTheConnectionAsAFailureWithEveryCommandAnsweredOnce() {
        RdmaTestKit.Listener listener = kit.listen(4);
        RdmaTestKit.Pair pair = kit.connect(listener);
        // the server's peer is the client: the server side sees it die
        kit.killPeer(pair.serverConnected());
        for (int n = 0; n < 10; n++) {
            pair.server().tell(RdmaProtocol.Send.of(new byte[] {1}, n));
        }
        Set<Object> answered = new HashSet<>();
        RdmaProtocol.Disconnected disconnected = null;
        while (disconnected == null || answered.size() < 10) {
            ConnectionEvent e = pair.serverEvents().receiveMessage(WAIT);
            if (e instanceof RdmaProtocol.Disconnected d) {
                disconnected = d;
            } else if (e instanceof RdmaProtocol.CommandFailed f) {
                answered.add(((RdmaProtocol.Send) f.command()).ack());
            }
        }
        // no closing notice came before the disconnect: a dead peer, not a closed one
        RdmaProtocol.ErrorClosed failed = assertInstanceOf(RdmaProtocol.ErrorClosed.class, disconnected.reason());
        assertInstanceOf(RdmaProtocol.PeerFailed.class, failed.cause());
        assertEquals(10, answered.size());
        // the killed side heard nothing, as a dead process would not; its test ends it
        pair.client().tell(new RdmaProtocol.Abort());
        RdmaTestKit.awaitDisconnected(pair.clientEvents());
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void aFailedPostIsAnsweredAndTheConnectionCarriesOn() {
        RdmaTestKit.Listener listener = kit.listen(4);
        RdmaTestKit.Pair pair = kit.connect(listener);
        kit.failNextPost(pair.clientConnected(), 12);
        pair.client().tell(RdmaProtocol.Send.of(new byte[] {1}, "refused"));
        RdmaProtocol.CommandFailed failed = pair.clientEvents().expectMessageClass(RdmaProtocol.CommandFailed.class,
                WAIT);
        assertEquals("refused", ((RdmaProtocol.Send) failed.command()).ack());
        pair.client().tell(RdmaProtocol.Send.of(new byte[] {2}, "carried"));
        assertEquals("carried", pair.clientEvents().expectMessageClass(RdmaProtocol.Acked.class, WAIT).token());
        kit.close(pair);
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void aConnectRequestDelayedPastTheConnectTimeoutFailsTheConnectAndTheLateRequestLeaksNothing() {
        RdmaTestKit.Listener listener = kit.listen(4);
        kit.delayNextCmEvent(CmEventType.CONNECT_REQUEST, Duration.ofSeconds(2));
        TestProbe<ConnectionEvent> client = kit.probe();
        kit.manager().tell(RdmaProtocol.Connect.to(listener.address(), client.getRef())
                .withTimeout(Duration.ofMillis(500)));
        assertInstanceOf(RdmaProtocol.TimedOut.class,
                client.expectMessageClass(RdmaProtocol.ConnectFailed.class, WAIT).reason());
        // the request still comes, late, for a connect that is gone: refusing it ends it
        RdmaProtocol.ConnectionRequested late = listener.events()
                .expectMessageClass(RdmaProtocol.ConnectionRequested.class, WAIT);
        late.connection().tell(new RdmaProtocol.Reject(null));
        client.expectNoMessage(Duration.ofMillis(200));
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void aCutPortLosesWhatItCarriesUntilRestored() {
        RdmaTestKit.Listener listener = kit.listen(4);
        RdmaTestKit.Pair pair = kit.connect(listener);
        kit.cutPort(pair.clientConnected().local());
        pair.client().tell(RdmaProtocol.Send.of(new byte[] {1}, "lost"));
        // with the port down the transport retries run out: the Send fails and the connection ends
        RdmaProtocol.CommandFailed failed = pair.clientEvents().expectMessageClass(RdmaProtocol.CommandFailed.class,
                Duration.ofSeconds(30));
        assertEquals("lost", ((RdmaProtocol.Send) failed.command()).ack());
        RdmaTestKit.awaitDisconnected(pair.clientEvents());
        kit.restorePort(pair.clientConnected().local());
        RdmaTestKit.Pair again = kit.connect(listener);
        again.client().tell(RdmaProtocol.Send.of(new byte[] {2}, "after"));
        again.clientEvents().expectMessage(WAIT, new RdmaProtocol.Acked("after"));
        pair.server().tell(new RdmaProtocol.Abort());
        kit.close(again);
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void aConnectionTheFabricDoesNotKnowIsATypedError() {
        RdmaProtocol.Connected nowhere = new RdmaProtocol.Connected(null, new InetSocketAddress("127.0.0.1", 1),
                new InetSocketAddress("127.0.0.1", 2), new byte[0]);
        assertThrows(IllegalArgumentException.class, () -> kit.killPeer(nowhere));
    }
}
