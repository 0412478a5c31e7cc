package io.rdmaactors.actors;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaactors.actors.RdmaProtocol.ConnectionCommand;
import io.rdmaactors.actors.RdmaProtocol.ConnectionEvent;
import io.rdmaactors.actors.RdmaProtocol.ListenerEvent;
import io.rdmaactors.testkit.RdmaTestKit;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.apache.pekko.actor.testkit.typed.javadsl.FishingOutcomes;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.junit.jupiter.api.Assumptions;

/** Sets up listeners and connected pairs through the manager, as a service would. */
final class Connections {

    static final Duration WAIT = Duration.ofSeconds(10);
    /** How long a test waits for hundreds of messages: a liveness bound, generous for emulated rdma-core. */
    static final Duration STREAM_WAIT = Duration.ofSeconds(120);

    record Listener(TestProbe<ListenerEvent> bind, RdmaProtocol.Listening listening) {
    }

    record Pair(ActorRef<ConnectionCommand> client, TestProbe<ConnectionEvent> clientEvents,
                ActorRef<ConnectionCommand> server, TestProbe<ConnectionEvent> serverEvents,
                RdmaProtocol.Connected clientConnected, RdmaProtocol.Connected serverConnected) {
    }

    private Connections() {
    }

    static Listener listen(RdmaTestKit kit, int backlog) {
        TestProbe<ListenerEvent> bind = kit.probe();
        kit.manager().tell(new RdmaProtocol.Listen(kit.address(0), bind.getRef(), backlog));
        return new Listener(bind, bind.expectMessageClass(RdmaProtocol.Listening.class, WAIT));
    }

    /**
     * Private data as sent, where the CM may pad it with zeros to its message's size (InfiniBand and
     * RoCE deliver 56 bytes for a connect, 196 for an accept, 148 for a reject).
     */
    static void assertPrivateData(byte[] sent, byte[] received) {
        assertTrue(received.length >= sent.length, "private data cut short: " + received.length + " < " + sent.length);
        assertArrayEquals(sent, Arrays.copyOf(received, sent.length), "private data as sent");
        for (int i = sent.length; i < received.length; i++) {
            assertEquals(0, received[i], "private data padded with zeros only");
        }
    }

    /** Skips a test that needs fault injection on a fabric without it (rdma-core has none). */
    static void assumeFaultInjection(RdmaTestKit kit) {
        Assumptions.assumeTrue(kit.fabric().faults().isPresent(),
                "the " + kit.fabric().provider() + " fabric has no fault injection");
    }

    static void unbind(Listener listener) {
        listener.listening().listener().tell(new RdmaProtocol.Unbind());
        listener.bind().fishForMessage(WAIT, e -> e instanceof RdmaProtocol.Unbound
                ? FishingOutcomes.complete() : FishingOutcomes.continueAndIgnore());
    }

    static Pair connect(RdmaTestKit kit, Listener listener, byte[] clientData, byte[] serverData) {
        TestProbe<ConnectionEvent> clientEvents = kit.probe();
        kit.manager().tell(RdmaProtocol.Connect.to(listener.listening().localAddress(), clientEvents.getRef()).withPrivateData(clientData).withTimeout(WAIT));
        RdmaProtocol.ConnectionRequested request = listener.bind()
                .expectMessageClass(RdmaProtocol.ConnectionRequested.class, WAIT);
        assertPrivateData(clientData, request.privateData());
        TestProbe<ConnectionEvent> serverEvents = kit.probe();
        request.connection().tell(new RdmaProtocol.Accept(serverEvents.getRef(), serverData));
        RdmaProtocol.Connected client = clientEvents.expectMessageClass(RdmaProtocol.Connected.class, WAIT);
        assertPrivateData(serverData, client.privateData());
        RdmaProtocol.Connected server = serverEvents.expectMessageClass(RdmaProtocol.Connected.class, WAIT);
        return new Pair(client.connection(), clientEvents, server.connection(), serverEvents, client, server);
    }

    static Pair connect(RdmaTestKit kit, Listener listener) {
        return connect(kit, listener, new byte[] {1, 2, 3}, new byte[] {4, 5});
    }

    /** Disconnects a pair and waits until both sides are gone and nothing is left registered. */
    static void close(RdmaTestKit kit, Pair pair) {
        pair.client().tell(new RdmaProtocol.Close());
        awaitDisconnected(pair.clientEvents());
        awaitDisconnected(pair.serverEvents());
    }

    /** Skips other events until the connection's Disconnected. */
    static RdmaProtocol.Disconnected awaitDisconnected(TestProbe<ConnectionEvent> events) {
        List<ConnectionEvent> seen = events.fishForMessage(WAIT, e -> e instanceof RdmaProtocol.Disconnected
                ? FishingOutcomes.complete() : FishingOutcomes.continueAndIgnore());
        return (RdmaProtocol.Disconnected) seen.get(seen.size() - 1);
    }
}
