package io.rdmaactors.actors;

import static io.rdmaactors.actors.Connections.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaactors.testkit.RdmaTestKit;
import io.rdmaactors.verbs.Fabric;
import java.net.InetSocketAddress;
import org.apache.pekko.actor.ActorRef;
import org.apache.pekko.actor.ActorSelection;
import org.apache.pekko.actor.DeadLetter;
import org.apache.pekko.actor.testkit.typed.javadsl.FishingOutcomes;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.eventstream.EventStream;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The manager restarts cleanly: the old fabric is released, a new one serves. */
class SupervisionTest {

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
    void managerRestartReleasesEverythingAndServesAgain() {
        RdmaTestKit.Listener listener = kit.listen(8);
        RdmaTestKit.Pair pair = kit.connect(listener);
        Fabric before = kit.fabric();
        TestProbe<org.apache.pekko.actor.DeadLetter> deadLetters = kit.probe();
        kit.testKit().system().eventStream().tell(new EventStream.Subscribe<>(org.apache.pekko.actor.DeadLetter.class,
                deadLetters.getRef()));

        kit.crashManager();

        // the client hears the end once: from the restart itself, or from its peer's DREQ first
        RdmaTestKit.awaitDisconnected(pair.clientEvents());
        pair.clientEvents().expectNoMessage(java.time.Duration.ofMillis(200));
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (before.ledger().total() != 0 && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertEquals(0, before.ledger().total(), "the old fabric released everything: " + before.ledger());
        assertNotSame(before, kit.fabric(), "the kit follows the restarted manager to its new fabric");

        RdmaTestKit.Listener again = kit.listen(8);
        RdmaTestKit.Pair fresh = kit.connect(again);
        fresh.client().tell(RdmaProtocol.Send.of(new byte[] {7}, "after-restart"));
        assertEquals("after-restart", fresh.clientEvents().expectMessageClass(RdmaProtocol.Acked.class, WAIT).token());
        kit.close(fresh);
        kit.unbind(again);
        kit.awaitNoLeaks(WAIT);
        // a connection unregistering from a device actor the restart stopped beside it is no news
        List<String> internal = new java.util.ArrayList<>();
        while (true) {
            try {
                String letter = deadLetters.receiveMessage(java.time.Duration.ofMillis(200)).toString();
                if (letter.contains("DeviceActor")) {
                    internal.add(letter);
                }
            } catch (AssertionError drained) {
                break;
            }
        }
        assertEquals(List.of(), internal);
    }

    @Test
    void aFailedCmEventActorEndsItsConnectionsAndTheManagerServesAgain() {
        RdmaTestKit.Listener listener = kit.listen(8);
        RdmaTestKit.Pair pair = kit.connect(listener);
        // a message that makes the CM event actor throw (a listener with no Listen)
        internal("/system/rdma-manager/cm-events").tell(new CmEventActor.StartListener(null), ActorRef.noSender());
        assertInstanceOf(RdmaProtocol.ErrorClosed.class, RdmaTestKit.awaitDisconnected(pair.clientEvents()).reason());
        listener.events().fishForMessage(WAIT, e -> e instanceof RdmaProtocol.Unbound
                ? FishingOutcomes.complete() : FishingOutcomes.continueAndIgnore());
        RdmaTestKit.Listener again = kit.listen(8);
        RdmaTestKit.Pair fresh = kit.connect(again);
        fresh.client().tell(RdmaProtocol.Send.of(new byte[] {7}, "after"));
        assertEquals("after", fresh.clientEvents().expectMessageClass(RdmaProtocol.Acked.class, WAIT).token());
        kit.close(fresh);
        kit.unbind(again);
    }

    @Test
    void aRestartedDeviceActorStillRoutesAsyncEventsToExistingConnections() {
        Connections.assumeFaultInjection(kit);
        RdmaTestKit.Listener listener = kit.listen(8);
        RdmaTestKit.Pair pair = kit.connect(listener);
        // a message that makes the device actor throw (a QP with no owner): supervision restarts it
        internal("/system/rdma-manager/device-soft0").tell(new DeviceActor.RegisterQp(1, null), ActorRef.noSender());
        pair.client().tell(new RdmaProtocol.LoadAlternatePath(new InetSocketAddress("127.0.0.2", 0), 2));
        pair.clientEvents().expectMessageClass(RdmaProtocol.AlternatePathLoaded.class, WAIT);
        kit.cutPort(pair.clientConnected().local());
        pair.client().tell(RdmaProtocol.Send.of(new byte[] {1}, 1));
        // PATH_MIG reaches the connection through the restarted device actor
        pair.clientEvents().fishForMessage(WAIT, e -> e instanceof RdmaProtocol.PathMigrated
                ? FishingOutcomes.complete() : FishingOutcomes.continueAndIgnore());
        kit.close(pair);
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    private ActorSelection internal(String path) {
        return kit.testKit().system().classicSystem().actorSelection(path);
    }

    @Test
    void theKitRestartsTheManagerAndItsLeakReportNamesOnlyTheUsersLeftovers() {
        kit.listen(8);
        AssertionError leak = assertThrows(AssertionError.class,
                () -> kit.awaitNoLeaks(java.time.Duration.ofMillis(100)));
        assertTrue(leak.getMessage().contains("{CM_ID=1}"), "the bound listener's id, nothing of the framework's: "
                + leak.getMessage());
        Fabric before = kit.fabric();
        Fabric after = kit.restartManager();
        assertNotSame(before, after, "a restarted manager opens its fabric afresh");
        kit.awaitNoLeaks(WAIT);
        RdmaTestKit.Listener again = kit.listen(8);
        kit.close(kit.connect(again));
        kit.unbind(again);
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void aConnectCutShortByAManagerRestartFailsAtOnce() {
        RdmaTestKit.Listener listener = kit.listen(8);
        TestProbe<RdmaProtocol.ConnectionEvent> client = kit.probe();
        kit.manager().tell(RdmaProtocol.Connect.to(listener.listening().localAddress(), client.getRef()).withTimeout(java.time.Duration.ofSeconds(60)));
        // the request stays unanswered, so the connect is still under way when the manager fails
        listener.events().expectMessageClass(RdmaProtocol.ConnectionRequested.class, WAIT);
        kit.crashManager();
        RdmaProtocol.ConnectFailed failed = client.expectMessageClass(RdmaProtocol.ConnectFailed.class, WAIT);
        assertInstanceOf(RdmaProtocol.DeviceError.class, failed.reason());
        client.expectNoMessage(java.time.Duration.ofMillis(200));
    }

    @Test
    void aConnectLostWithTheCmEventActorThatWasToStartItFails() {
        // what Pekko makes of a StartConnector still in the mailbox of a CM event actor that a
        // manager restart (or the system's shutdown) stopped; the manager and its children are its addressees
        TestProbe<RdmaProtocol.ConnectionEvent> client = kit.probe();
        InetSocketAddress remote = kit.address(7174);
        CmEventActor.StartConnector lost = new CmEventActor.StartConnector(RdmaProtocol.Connect.to(remote, client.getRef()));
        kit.testKit().system().eventStream().tell(new EventStream.Publish<>(new DeadLetter(lost,
                Adapter.toClassic(client.getRef()), Adapter.toClassic(kit.manager()))));
        RdmaProtocol.ConnectFailed failed = client.expectMessageClass(RdmaProtocol.ConnectFailed.class, WAIT);
        assertEquals(remote, failed.remote());
        assertInstanceOf(RdmaProtocol.DeviceError.class, failed.reason());
        client.expectNoMessage(java.time.Duration.ofMillis(200));
    }

    /**
     * Also: the restart destroys the old CM event channel cleanly. Requests whose event was still in
     * the channel or the mailbox were left on it before, and the channel's destroy failed EBUSY.
     */
    @Test
    void connectsToldJustBeforeAManagerRestartEachHearTheirEnd() {
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> logged =
                new ch.qos.logback.core.read.ListAppender<>();
        ch.qos.logback.classic.Logger root = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(
                org.slf4j.Logger.ROOT_LOGGER_NAME);
        logged.start();
        root.addAppender(logged);
        try {
            connectJustBeforeRestarts();
        } finally {
            root.detachAppender(logged);
        }
        List<String> busy = logged.list.stream().map(e -> e.getFormattedMessage())
                .filter(m -> m.contains("rdma_destroy_event_channel")).toList();
        assertEquals(List.of(), busy, "the old CM event channel was destroyed with ids on it");
    }

    private void connectJustBeforeRestarts() {
        for (int round = 0; round < 3; round++) {
            RdmaTestKit.Listener listener = kit.listen(64);
            java.util.List<TestProbe<RdmaProtocol.ConnectionEvent>> clients = new java.util.ArrayList<>();
            for (int i = 0; i < 10; i++) {
                TestProbe<RdmaProtocol.ConnectionEvent> client = kit.probe();
                clients.add(client);
                kit.manager().tell(RdmaProtocol.Connect.to(listener.listening().localAddress(), client.getRef()));
            }
            // some of these are still on their way to the CM event actor the restart stops
            kit.crashManager();
            for (TestProbe<RdmaProtocol.ConnectionEvent> client : clients) {
                client.fishForMessage(WAIT, e -> e instanceof RdmaProtocol.ConnectFailed
                        || e instanceof RdmaProtocol.Disconnected ? FishingOutcomes.complete()
                        : FishingOutcomes.continueAndIgnore());
            }
        }
    }
}
