package io.rdmaactors.actors;

import static io.rdmaactors.actors.Connections.WAIT;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaactors.actors.RdmaProtocol.ConnectionEvent;
import io.rdmaactors.testkit.RdmaTestKit;
import io.rdmaactors.verbs.Access;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ConnectionActorTest {

    private RdmaTestKit kit;

    @BeforeEach
    void start() {
        kit = RdmaTestKit.create("rdma-actors.accept-timeout = 500ms\nrdma-actors.receive-queue-depth = 8\n"
                + "rdma-actors.send-queue-depth = 4");
    }

    @AfterEach
    void stop() {
        kit.close();
    }

    @Test
    void connectAndAcceptCarryPrivateDataBothWays() {
        RdmaTestKit.Listener listener = kit.listen(8);
        byte[] clientData = {9, 8, 7};
        byte[] serverData = new byte[196];
        serverData[195] = 42;
        RdmaTestKit.Pair pair = kit.connect(listener, clientData, serverData);
        Connections.assertPrivateData(clientData, pair.serverConnected().privateData());
        Connections.assertPrivateData(serverData, pair.clientConnected().privateData());
        kit.close(pair);
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void connectToNobodyFailsNoListenerWithinItsTimeout() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        TestProbe<ConnectionEvent> events = kit.probe();
        kit.manager().tell(RdmaProtocol.Connect.to(kit.address(port), events.getRef()).withTimeout(Duration.ofSeconds(3)));
        RdmaProtocol.ConnectFailed failed = events.expectMessageClass(RdmaProtocol.ConnectFailed.class,
                Duration.ofSeconds(3));
        assertInstanceOf(RdmaProtocol.NoListener.class, failed.reason(), "nobody listens: not a Reject of a server's");
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void connectOffTheFabricFailsWithAnAddressError() {
        TestProbe<ConnectionEvent> events = kit.probe();
        kit.manager().tell(RdmaProtocol.Connect.to(new InetSocketAddress("192.0.2.1", 7471), events.getRef()).withTimeout(Duration.ofSeconds(3)));
        RdmaProtocol.ConnectFailed failed = events.expectMessageClass(RdmaProtocol.ConnectFailed.class, WAIT);
        assertInstanceOf(RdmaProtocol.AddressError.class, failed.reason());
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void unansweredRequestIsRejectedAfterTheAcceptTimeout() {
        RdmaTestKit.Listener listener = kit.listen(8);
        TestProbe<ConnectionEvent> events = kit.probe();
        kit.manager().tell(RdmaProtocol.Connect.to(listener.listening().localAddress(), events.getRef()).withTimeout(WAIT));
        listener.events().expectMessageClass(RdmaProtocol.ConnectionRequested.class, WAIT);
        RdmaProtocol.ConnectFailed failed = events.expectMessageClass(RdmaProtocol.ConnectFailed.class, WAIT);
        assertEquals(28, assertInstanceOf(RdmaProtocol.Rejected.class, failed.reason()).status());
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void rejectCarriesPrivateData() {
        RdmaTestKit.Listener listener = kit.listen(8);
        TestProbe<ConnectionEvent> events = kit.probe();
        kit.manager().tell(RdmaProtocol.Connect.to(listener.listening().localAddress(), events.getRef()).withTimeout(WAIT));
        listener.events().expectMessageClass(RdmaProtocol.ConnectionRequested.class, WAIT).connection()
                .tell(new RdmaProtocol.Reject(new byte[] {42, 43}));
        RdmaProtocol.ConnectFailed failed = events.expectMessageClass(RdmaProtocol.ConnectFailed.class, WAIT);
        RdmaProtocol.Rejected rejected = assertInstanceOf(RdmaProtocol.Rejected.class, failed.reason());
        assertEquals(28, rejected.status());
        Connections.assertPrivateData(new byte[] {42, 43}, rejected.privateData());
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void sendsArriveInOrderAndEachIsAckedOnce() {
        RdmaTestKit.Listener listener = kit.listen(8);
        RdmaTestKit.Pair pair = kit.connect(listener);
        for (int round = 0; round < 25; round++) {
            for (int i = 0; i < 4; i++) {
                int n = round * 4 + i;
                pair.client().tell(RdmaProtocol.Send.of(ByteBuffer.allocate(4).putInt(n).array(), n));
            }
            Set<Object> acked = new HashSet<>();
            for (int i = 0; i < 4; i++) {
                acked.add(pair.clientEvents().expectMessageClass(RdmaProtocol.Acked.class, WAIT).token());
            }
            assertEquals(4, acked.size());
        }
        for (int n = 0; n < 100; n++) {
            RdmaProtocol.Received r = pair.serverEvents().expectMessageClass(RdmaProtocol.Received.class, WAIT);
            assertEquals(n, r.data().asByteBuffer().getInt());
        }
        pair.clientEvents().expectNoMessage(Duration.ofMillis(100));
        kit.close(pair);
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void theAcceptingHandlerHearsConnectedBeforeAnyMessage() {
        RdmaTestKit.Listener listener = kit.listen(8);
        TestProbe<ConnectionEvent> clientEvents = kit.probe();
        kit.manager().tell(RdmaProtocol.Connect.to(listener.listening().localAddress(), clientEvents.getRef()).withTimeout(WAIT));
        TestProbe<ConnectionEvent> serverEvents = kit.probe();
        listener.events().expectMessageClass(RdmaProtocol.ConnectionRequested.class, WAIT).connection()
                .tell(new RdmaProtocol.Accept(serverEvents.getRef(), null));
        // the client may send as soon as it is established, before the server side is
        RdmaProtocol.Connected client = clientEvents.expectMessageClass(RdmaProtocol.Connected.class, WAIT);
        for (int n = 0; n < 3; n++) {
            client.connection().tell(RdmaProtocol.Send.of(new byte[] {(byte) n}, null));
        }
        RdmaProtocol.Connected server = serverEvents.expectMessageClass(RdmaProtocol.Connected.class, WAIT);
        for (int n = 0; n < 3; n++) {
            assertEquals(n, serverEvents.expectMessageClass(RdmaProtocol.Received.class, WAIT).data().apply(0));
        }
        kit.close(new RdmaTestKit.Pair(client.connection(), clientEvents, server.connection(),
                serverEvents, client, server));
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void rdmaWriteReadAndAtomicsThroughAnExportedRegion() {
        RdmaTestKit.Listener listener = kit.listen(8);
        RdmaTestKit.Pair pair = kit.connect(listener);
        ByteBuffer exportedMemory = ByteBuffer.allocateDirect(64).order(ByteOrder.nativeOrder());
        exportedMemory.putLong(32, 100);
        TestProbe<RdmaProtocol.ExportReply> exported = kit.probe();
        pair.server().tell(new RdmaProtocol.Export(exportedMemory, EnumSet.of(Access.REMOTE_READ, Access.REMOTE_WRITE,
                Access.REMOTE_ATOMIC), exported.getRef()));
        RemoteRegion region = exported.expectMessageClass(RdmaProtocol.Exported.class, WAIT).region();
        RemoteRegion travelled = RemoteRegion.fromBytes(region.toBytes());
        assertEquals(region, travelled);

        pair.client().tell(RdmaProtocol.Write.of(travelled, 0, new byte[] {1, 2, 3, 4}, "w"));
        assertEquals("w", pair.clientEvents().expectMessageClass(RdmaProtocol.Acked.class, WAIT).token());
        assertEquals(3, exportedMemory.get(2));
        pair.client().tell(new RdmaProtocol.Read(travelled, 1, 3, "r"));
        RdmaProtocol.ReadCompleted read = pair.clientEvents().expectMessageClass(RdmaProtocol.ReadCompleted.class, WAIT);
        assertArrayEquals(new byte[] {2, 3, 4}, read.data().toArray());
        pair.client().tell(new RdmaProtocol.FetchAdd(travelled, 32, 5, "fa"));
        assertEquals(100, pair.clientEvents().expectMessageClass(RdmaProtocol.AtomicCompleted.class, WAIT).original());
        pair.client().tell(new RdmaProtocol.CompareSwap(travelled, 32, 105, 7, "cs"));
        assertEquals(105, pair.clientEvents().expectMessageClass(RdmaProtocol.AtomicCompleted.class, WAIT).original());
        assertEquals(7, exportedMemory.getLong(32));
        pair.client().tell(RdmaProtocol.Write.of(travelled, 8, new byte[] {5}, "wi").withImmediate(77));
        pair.clientEvents().expectMessageClass(RdmaProtocol.Acked.class, WAIT);
        RdmaProtocol.Received imm = pair.serverEvents().expectMessageClass(RdmaProtocol.Received.class, WAIT);
        assertEquals(77, imm.immediate());
        assertEquals(0, imm.data().size(), "the written bytes are in exported memory, not in the receive");
        assertEquals(5, exportedMemory.get(8));
        kit.close(pair);
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    /**
     * A connection's commands take effect in the order they came: a Write told right after a Read
     * of the same memory does not change what the Read returns. On rdma-core this runs the Write
     * with IBV_SEND_FENCE; neither rxe nor the soft fabric within one JVM let the Write overtake
     * here without it (between processes the soft fabric did), so FencedCommandsTest pins the
     * fence itself.
     */
    @Test
    void aReadReturnsTheMemoryAsItWasBeforeTheWriteToldAfterIt() {
        RdmaTestKit.Listener listener = kit.listen(8);
        RdmaTestKit.Pair pair = kit.connect(listener);
        int size = 4096;
        ByteBuffer memory = ByteBuffer.allocateDirect(size);
        TestProbe<RdmaProtocol.ExportReply> exported = kit.probe();
        pair.server().tell(new RdmaProtocol.Export(memory, EnumSet.of(Access.REMOTE_READ, Access.REMOTE_WRITE),
                exported.getRef()));
        RemoteRegion region = exported.expectMessageClass(RdmaProtocol.Exported.class, WAIT).region();
        for (int round = 0; round < 10; round++) {
            byte[] next = new byte[size];
            Arrays.fill(next, (byte) (round + 1));
            pair.client().tell(new RdmaProtocol.Read(region, 0, size, "read " + round));
            pair.client().tell(RdmaProtocol.Write.of(region, 0, next, "write " + round));
            byte[] before = new byte[size];
            Arrays.fill(before, (byte) round);
            assertArrayEquals(before, pair.clientEvents().expectMessageClass(RdmaProtocol.ReadCompleted.class, WAIT)
                    .data().toArray(), "round " + round);
            assertEquals("write " + round,
                    pair.clientEvents().expectMessageClass(RdmaProtocol.Acked.class, WAIT).token());
        }
        assertEquals(10, memory.get(size - 1));
        kit.close(pair);
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void anAcceptingSideExportsBeforeAcceptAndSendsTheRegionInItsPrivateData() {
        RdmaTestKit.Listener listener = kit.listen(8);
        TestProbe<ConnectionEvent> clientEvents = kit.probe();
        kit.manager().tell(RdmaProtocol.Connect.to(listener.listening().localAddress(), clientEvents.getRef()).withTimeout(WAIT));
        RdmaProtocol.ConnectionRequested request = listener.events()
                .expectMessageClass(RdmaProtocol.ConnectionRequested.class, WAIT);
        ByteBuffer memory = ByteBuffer.allocateDirect(32);
        memory.put(3, (byte) 33);
        TestProbe<RdmaProtocol.ExportReply> exported = kit.probe();
        request.connection().tell(new RdmaProtocol.Export(memory, EnumSet.of(Access.REMOTE_READ), exported.getRef()));
        RemoteRegion region = exported.expectMessageClass(RdmaProtocol.Exported.class, WAIT).region();
        TestProbe<ConnectionEvent> serverEvents = kit.probe();
        request.connection().tell(new RdmaProtocol.Accept(serverEvents.getRef(), region.toBytes()));
        RdmaProtocol.Connected connected = clientEvents.expectMessageClass(RdmaProtocol.Connected.class, WAIT);
        RemoteRegion travelled = RemoteRegion.fromBytes(connected.privateData());
        connected.connection().tell(new RdmaProtocol.Read(travelled, 3, 1, "r"));
        assertEquals(33, clientEvents.expectMessageClass(RdmaProtocol.ReadCompleted.class, WAIT).data().apply(0));
        RdmaProtocol.Connected server = serverEvents.expectMessageClass(RdmaProtocol.Connected.class, WAIT);
        kit.close(new RdmaTestKit.Pair(connected.connection(), clientEvents, server.connection(),
                serverEvents, connected, server));
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void unexportRevokesTheRegionForThePeersLaterAccesses() {
        RdmaTestKit.Listener listener = kit.listen(8);
        RdmaTestKit.Pair pair = kit.connect(listener);
        TestProbe<RdmaProtocol.ExportReply> exported = kit.probe();
        pair.server().tell(new RdmaProtocol.Export(ByteBuffer.allocateDirect(64),
                EnumSet.of(Access.REMOTE_READ, Access.REMOTE_WRITE), exported.getRef()));
        RemoteRegion region = exported.expectMessageClass(RdmaProtocol.Exported.class, WAIT).region();
        pair.client().tell(RdmaProtocol.Write.of(region, 0, new byte[] {1}, "before"));
        pair.clientEvents().expectMessage(WAIT, new RdmaProtocol.Acked("before"));
        TestProbe<RdmaProtocol.UnexportReply> unexported = kit.probe();
        RdmaProtocol.Unexport unknown = new RdmaProtocol.Unexport(new RemoteRegion(region.address(), 64,
                region.rkey() + 1), unexported.getRef());
        pair.server().tell(unknown);
        assertEquals(unknown, unexported.expectMessageClass(RdmaProtocol.CommandFailed.class, WAIT).command());
        pair.server().tell(new RdmaProtocol.Unexport(region, unexported.getRef()));
        assertEquals(region, unexported.expectMessageClass(RdmaProtocol.Unexported.class, WAIT).region());
        RdmaProtocol.Write after = RdmaProtocol.Write.of(region, 0, new byte[] {2}, "after");
        pair.client().tell(after);
        RdmaProtocol.CommandFailed failed = pair.clientEvents().expectMessageClass(RdmaProtocol.CommandFailed.class,
                WAIT);
        assertEquals(after, failed.command());
        assertEquals(io.rdmaactors.verbs.WcStatus.REM_ACCESS_ERR,
                assertInstanceOf(RdmaProtocol.WorkRequestFailed.class, failed.cause()).status());
        assertInstanceOf(RdmaProtocol.ErrorClosed.class, RdmaTestKit.awaitDisconnected(pair.clientEvents()).reason());
        RdmaTestKit.awaitDisconnected(pair.serverEvents());
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void memoryIsNotRemotelyAccessibleUnlessExportedWithTheRight() {
        RdmaTestKit.Listener listener = kit.listen(8);
        RdmaTestKit.Pair pair = kit.connect(listener);
        TestProbe<RdmaProtocol.ExportReply> exported = kit.probe();
        pair.server().tell(new RdmaProtocol.Export(ByteBuffer.allocateDirect(64), EnumSet.of(Access.REMOTE_READ),
                exported.getRef()));
        RemoteRegion readOnly = exported.expectMessageClass(RdmaProtocol.Exported.class, WAIT).region();
        RdmaProtocol.Write write = RdmaProtocol.Write.of(readOnly, 0, new byte[] {1}, "w");
        pair.client().tell(write);
        RdmaProtocol.CommandFailed failed = pair.clientEvents().expectMessageClass(RdmaProtocol.CommandFailed.class, WAIT);
        assertEquals(write, failed.command());
        RdmaProtocol.WorkRequestFailed cause = assertInstanceOf(RdmaProtocol.WorkRequestFailed.class, failed.cause());
        assertEquals(io.rdmaactors.verbs.WcStatus.REM_ACCESS_ERR, cause.status());
        RdmaTestKit.awaitDisconnected(pair.clientEvents());
        pair.server().tell(new RdmaProtocol.Abort());
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void aRegionExportedOnOneConnectionIsRefusedToThePeerOfAnother() {
        RdmaTestKit.Listener listener = kit.listen(8);
        RdmaTestKit.Pair exportedTo = kit.connect(listener);
        RdmaTestKit.Pair other = kit.connect(listener);
        ByteBuffer memory = ByteBuffer.allocateDirect(64);
        memory.put(0, (byte) 42);
        TestProbe<RdmaProtocol.ExportReply> exported = kit.probe();
        exportedTo.server().tell(new RdmaProtocol.Export(memory, EnumSet.of(Access.REMOTE_READ), exported.getRef()));
        RemoteRegion region = exported.expectMessageClass(RdmaProtocol.Exported.class, WAIT).region();

        RdmaProtocol.Read stolen = RdmaProtocol.Read.of(region, 0, 1, "other");
        other.client().tell(stolen);
        RdmaProtocol.CommandFailed failed = other.clientEvents().expectMessageClass(RdmaProtocol.CommandFailed.class,
                WAIT);
        assertEquals(stolen, failed.command());
        RdmaProtocol.WorkRequestFailed cause = assertInstanceOf(RdmaProtocol.WorkRequestFailed.class, failed.cause());
        assertEquals(io.rdmaactors.verbs.WcStatus.REM_ACCESS_ERR, cause.status());
        RdmaTestKit.awaitDisconnected(other.clientEvents());

        exportedTo.client().tell(RdmaProtocol.Read.of(region, 0, 1, "own"));
        assertEquals(42, exportedTo.clientEvents().expectMessageClass(RdmaProtocol.ReadCompleted.class, WAIT)
                .data().apply(0), "the peer it was exported to still reads it");
        other.server().tell(new RdmaProtocol.Abort());
        kit.close(exportedTo);
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void peerDisconnectMidStreamAnswersEveryRequestOnce() {
        RdmaTestKit.Listener listener = kit.listen(8);
        RdmaTestKit.Pair pair = kit.connect(listener);
        pair.server().tell(new RdmaProtocol.SuspendReading());
        for (int n = 0; n < 12; n++) {
            pair.client().tell(RdmaProtocol.Send.of(new byte[] {(byte) n}, n));
        }
        pair.server().tell(new RdmaProtocol.Close());
        Set<Object> answered = new HashSet<>();
        boolean disconnected = false;
        while (!disconnected) {
            ConnectionEvent e = pair.clientEvents().receiveMessage(WAIT);
            if (e instanceof RdmaProtocol.Acked a) {
                assertTrue(answered.add(a.token()), "acked twice: " + a.token());
            } else if (e instanceof RdmaProtocol.CommandFailed f) {
                assertTrue(answered.add(((RdmaProtocol.Send) f.command()).ack()), "answered twice: " + f);
            } else if (e instanceof RdmaProtocol.Disconnected d) {
                assertInstanceOf(RdmaProtocol.PeerClosed.class, d.reason());
                disconnected = true;
            }
        }
        assertEquals(12, answered.size(), "every send answered before Disconnected");
        RdmaTestKit.awaitDisconnected(pair.serverEvents());
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    /**
     * rdma_cm reports every disconnect alike; the peer still tells a Close or ConfirmedClose (its
     * closing notice came first) from an Abort or a dead process (none came).
     */
    @Test
    void thePeerTellsACloseFromAnAbortAndAKill() {
        RdmaTestKit.Listener listener = kit.listen(8);
        for (String ending : List.of("close", "confirmed-close", "abort", "kill")) {
            RdmaTestKit.Pair pair = kit.connect(listener);
            pair.client().tell(RdmaProtocol.Send.of(new byte[] {1}, "before"));
            pair.serverEvents().expectMessageClass(RdmaProtocol.Received.class, WAIT);
            switch (ending) {
                case "close" -> pair.client().tell(new RdmaProtocol.Close());
                case "confirmed-close" -> pair.client().tell(new RdmaProtocol.ConfirmedClose());
                case "abort" -> pair.client().tell(new RdmaProtocol.Abort());
                default -> {
                    Connections.assumeFaultInjection(kit);
                    kit.killPeer(pair.serverConnected());
                }
            }
            RdmaProtocol.DisconnectReason heard = RdmaTestKit.awaitDisconnected(pair.serverEvents()).reason();
            if (ending.contains("close")) {
                assertInstanceOf(RdmaProtocol.PeerClosed.class, heard, ending);
            } else {
                RdmaProtocol.ErrorClosed failed = assertInstanceOf(RdmaProtocol.ErrorClosed.class, heard, ending);
                assertInstanceOf(RdmaProtocol.PeerFailed.class, failed.cause(), ending);
            }
            if (ending.equals("kill")) {
                pair.client().tell(new RdmaProtocol.Abort()); // the killed side heard nothing
            }
            RdmaTestKit.awaitDisconnected(pair.clientEvents());
        }
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void handlerDeathClosesItsConnection() {
        RdmaTestKit.Listener listener = kit.listen(8);
        TestProbe<ConnectionEvent> clientEvents = kit.probe();
        kit.manager().tell(RdmaProtocol.Connect.to(listener.listening().localAddress(), clientEvents.getRef()).withTimeout(WAIT));
        TestProbe<ConnectionEvent> doomed = kit.probe();
        listener.events().expectMessageClass(RdmaProtocol.ConnectionRequested.class, WAIT).connection()
                .tell(new RdmaProtocol.Accept(doomed.getRef(), null));
        clientEvents.expectMessageClass(RdmaProtocol.Connected.class, WAIT);
        doomed.expectMessageClass(RdmaProtocol.Connected.class, WAIT);
        doomed.stop();
        RdmaProtocol.Disconnected d = clientEvents.expectMessageClass(RdmaProtocol.Disconnected.class, WAIT);
        // the connection ended without a close: its peer hears a failure, as of a TCP peer's reset
        RdmaProtocol.ErrorClosed failed = assertInstanceOf(RdmaProtocol.ErrorClosed.class, d.reason());
        assertInstanceOf(RdmaProtocol.PeerFailed.class, failed.cause());
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    /**
     * Sends still in flight or still to be posted when the device goes: each is answered once, every
     * connection ends, and nothing is left allocated. Registering the send slots for a fresh
     * connection's first Sends fails on a removed device; that failure took the command with it and
     * failed the QP actor, whose connection then never ended.
     */
    @Test
    void deviceRemovalAnswersEveryCommandInFlightAndEndsEveryConnection() {
        Connections.assumeFaultInjection(kit);
        RdmaTestKit.Listener listener = kit.listen(16);
        List<RdmaTestKit.Pair> pairs = new java.util.ArrayList<>();
        for (int i = 0; i < 8; i++) {
            pairs.add(kit.connect(listener));
        }
        for (RdmaTestKit.Pair pair : pairs) {
            for (int n = 0; n < 4; n++) {
                pair.client().tell(RdmaProtocol.Send.of(new byte[] {(byte) n}, n));
            }
        }
        String device = kit.fabric().devices().get(0).name();
        kit.removeDevice(listener.address());
        for (RdmaTestKit.Pair pair : pairs) {
            Set<Object> answered = new HashSet<>();
            boolean ended = false;
            while (!ended) {
                ConnectionEvent e = pair.clientEvents().expectMessageClass(ConnectionEvent.class, WAIT);
                if (e instanceof RdmaProtocol.Acked acked) {
                    assertTrue(answered.add(acked.token()), "answered twice: " + acked);
                } else if (e instanceof RdmaProtocol.CommandFailed failed) {
                    assertTrue(answered.add(((RdmaProtocol.Send) failed.command()).ack()), "answered twice: " + failed);
                } else if (e instanceof RdmaProtocol.Disconnected d) {
                    RdmaProtocol.ErrorClosed closed = assertInstanceOf(RdmaProtocol.ErrorClosed.class, d.reason());
                    assertEquals(device, assertInstanceOf(RdmaProtocol.DeviceLost.class, closed.cause()).device());
                    ended = true;
                }
            }
            assertEquals(Set.of(0, 1, 2, 3), answered, "every Send answered before Disconnected");
            RdmaTestKit.awaitDisconnected(pair.serverEvents());
        }
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void deviceRemovalEndsEveryConnectionOnItErrorClosed() {
        Connections.assumeFaultInjection(kit);
        RdmaTestKit.Listener listener = kit.listen(8);
        RdmaTestKit.Pair a = kit.connect(listener);
        RdmaTestKit.Pair b = kit.connect(listener);
        kit.removeDevice(listener.address());
        for (TestProbe<ConnectionEvent> events : List.of(a.clientEvents(), a.serverEvents(), b.clientEvents(),
                b.serverEvents())) {
            RdmaProtocol.Disconnected d = events.expectMessageClass(RdmaProtocol.Disconnected.class, WAIT);
            assertInstanceOf(RdmaProtocol.ErrorClosed.class, d.reason());
        }
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }
}
