package io.rdmaactors.actors;

import static io.rdmaactors.actors.Connections.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.rdmaactors.actors.RdmaProtocol.ConnectionEvent;
import io.rdmaactors.testkit.RdmaTestKit;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A listener's admission rules: requests beyond them are rejected with a reason and never reach the handler. */
class AdmissionTest {

    private RdmaTestKit kit;

    @BeforeEach
    void start() {
        kit = RdmaTestKit.create();
    }

    @AfterEach
    void stop() {
        kit.close();
    }

    private RdmaTestKit.Listener listen(RdmaProtocol.Admission admission) {
        TestProbe<RdmaProtocol.ListenerEvent> bind = kit.probe();
        kit.manager().tell(RdmaProtocol.Listen.on(kit.address(0), bind.getRef()).withAdmission(admission));
        return new RdmaTestKit.Listener(bind, bind.expectMessageClass(RdmaProtocol.Listening.class, WAIT));
    }

    /** Connects and expects the listener itself to reject: the client hears why, the handler nothing. */
    private String assertRefused(RdmaTestKit.Listener listener, byte[] privateData) {
        TestProbe<ConnectionEvent> client = kit.probe();
        kit.manager().tell(RdmaProtocol.Connect.to(listener.listening().localAddress(), client.getRef())
                .withPrivateData(privateData).withTimeout(WAIT));
        RdmaProtocol.Rejected rejected = assertInstanceOf(RdmaProtocol.Rejected.class,
                client.expectMessageClass(RdmaProtocol.ConnectFailed.class, WAIT).reason());
        assertEquals(28, rejected.status(), "a consumer reject, as rdma_reject sends");
        listener.events().expectNoMessage(Duration.ofMillis(100));
        return new String(rejected.privateData(), StandardCharsets.US_ASCII).trim();
    }

    @Test
    void beyondMaxConnectionsRequestsAreRejectedUntilOneCloses() {
        RdmaTestKit.Listener listener = listen(RdmaProtocol.Admission.all().withMaxConnections(2));
        RdmaTestKit.Pair first = kit.connect(listener);
        RdmaTestKit.Pair second = kit.connect(listener);
        assertTrue(assertRefused(listener, null).startsWith("admission: 2 connections open"));
        kit.close(first);
        // the listener hears the first connection freed as its handler hears Disconnected: retry until it has
        long deadline = System.nanoTime() + WAIT.toNanos();
        TestProbe<ConnectionEvent> client;
        while (true) {
            client = kit.probe();
            kit.manager().tell(RdmaProtocol.Connect.to(listener.listening().localAddress(), client.getRef())
                    .withTimeout(WAIT));
            // a refusal comes at once; an admitted request waits for the handler's Accept (within the CM timeout)
            try {
                client.expectMessageClass(RdmaProtocol.ConnectFailed.class, Duration.ofMillis(500));
            } catch (AssertionError admitted) {
                break;
            }
            if (System.nanoTime() > deadline) {
                fail("still refused after a connection closed");
            }
        }
        RdmaProtocol.ConnectionRequested request = listener.events()
                .expectMessageClass(RdmaProtocol.ConnectionRequested.class, WAIT);
        TestProbe<ConnectionEvent> server = kit.probe();
        request.connection().tell(RdmaProtocol.Accept.with(server.getRef()));
        client.expectMessageClass(RdmaProtocol.Connected.class, WAIT).connection().tell(new RdmaProtocol.Close());
        RdmaTestKit.awaitDisconnected(client);
        RdmaTestKit.awaitDisconnected(server);
        kit.close(second);
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void requestsFasterThanTheRateAreRejected() {
        RdmaTestKit.Listener listener = listen(RdmaProtocol.Admission.all().withRate(0.1));
        RdmaTestKit.Pair first = kit.connect(listener);
        assertTrue(assertRefused(listener, null).startsWith("admission: more than 0.1 requests a second"));
        kit.close(first);
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void theFilterSeesAddressAndPrivateData() {
        AtomicReference<InetSocketAddress> seen = new AtomicReference<>();
        RdmaTestKit.Listener listener = listen(RdmaProtocol.Admission.all().withFilter((remote, data) -> {
            seen.set(remote);
            return data.length == 0 || data[0] != 'x';
        }));
        assertEquals("admission: refused by the listener's filter", assertRefused(listener, new byte[] {'x'}));
        RdmaTestKit.Pair admitted = kit.connect(listener, new byte[] {'y'}, new byte[0]);
        assertEquals(admitted.clientConnected().local(), seen.get(), "the filter saw the client's address");
        kit.close(admitted);
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }
}
