package io.rdmaactors.actors;

import static io.rdmaactors.actors.Connections.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaactors.actors.streams.RdmaStreams;
import io.rdmaactors.testkit.RdmaTestKit;
import io.rdmaactors.verbs.Access;
import io.rdmaactors.verbs.ResourceKind;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Receiving in place and sending from registered memory: the bytes are where they landed or lie, not copied. */
class ZeroCopyTest {

    private static final int IN_PLACE_FROM = 256;
    private static final RdmaProtocol.ConnectionOptions IN_PLACE = RdmaProtocol.ConnectionOptions.none()
            .withReceiveInPlace(IN_PLACE_FROM);

    private RdmaTestKit kit;
    private RdmaTestKit.Listener listener;

    @AfterEach
    void stop() {
        kit.close();
    }

    private RdmaTestKit.Pair connect(String config) {
        kit = RdmaTestKit.create(config);
        listener = kit.listen(8, IN_PLACE);
        return kit.connect(listener, IN_PLACE);
    }

    private void assertNoLeaks(RdmaTestKit.Pair pair) {
        kit.close(pair);
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }

    private static ByteString filled(int size, int value) {
        byte[] data = new byte[size];
        Arrays.fill(data, (byte) value);
        return ByteString.fromArrayUnsafe(data);
    }

    private static ByteString bytesOf(ByteBuffer buffer) {
        return ByteString.fromByteBuffer(buffer);
    }

    private static RdmaProtocol.Received received(TestProbe<RdmaProtocol.ConnectionEvent> events) {
        return events.expectMessageClass(RdmaProtocol.Received.class, WAIT);
    }

    private LocalRegion register(ActorRef<RdmaProtocol.ConnectionCommand> connection, ByteBuffer buffer) {
        TestProbe<RdmaProtocol.RegisterMemoryReply> replies = kit.probe();
        connection.tell(new RdmaProtocol.RegisterMemory(buffer, replies.getRef()));
        return replies.expectMessageClass(RdmaProtocol.MemoryRegistered.class, WAIT).region();
    }

    @Test
    void aMessageReceivedInPlaceKeepsItsReceiveBufferUntilReleased() {
        // two receive buffers: a third message waits (receiver not ready) while both are held
        RdmaTestKit.Pair pair = connect("rdma-actors.receive-queue-depth = 2");
        for (int n = 1; n <= 3; n++) {
            pair.client().tell(RdmaProtocol.Send.of(filled(1024, n)));
        }
        RdmaProtocol.Received first = received(pair.serverEvents());
        RdmaProtocol.Received second = received(pair.serverEvents());
        pair.serverEvents().expectNoMessage(Duration.ofMillis(300));
        assertTrue(first.releasable());
        assertEquals(1024, first.size());
        assertTrue(first.buffer().isReadOnly());
        assertEquals(filled(1024, 1), bytesOf(first.buffer()));
        assertEquals(filled(1024, 2), bytesOf(second.buffer()));
        ByteString kept = bytesOf(first.buffer()); // a copy, made before the release
        pair.server().tell(new RdmaProtocol.Release(first));
        RdmaProtocol.Received third = received(pair.serverEvents());
        assertEquals(filled(1024, 3), bytesOf(third.buffer()));
        assertEquals(filled(1024, 3), bytesOf(first.buffer()), "the third came in the buffer the first gave back");
        assertEquals(filled(1024, 1), kept);
        assertFalse(first.releasable());
        assertThrows(IllegalStateException.class, first::data, "its buffer carries a later message");
        assertFalse(first.equals(third), "its bytes are gone: it equals only itself");
        assertEquals(first, first);
        assertEquals(filled(1024, 2), bytesOf(second.buffer()), "a buffer still held is left alone");
        pair.server().tell(new RdmaProtocol.Release(second));
        pair.server().tell(new RdmaProtocol.Release(third));
        assertNoLeaks(pair);
    }

    @Test
    void smallMessagesAreCopiedAndASendReleasingGivesTheBufferBackOncePosted() {
        RdmaTestKit.Pair pair = connect("rdma-actors.receive-queue-depth = 2");
        pair.client().tell(RdmaProtocol.Send.of(filled(IN_PLACE_FROM - 1, 7)));
        RdmaProtocol.Received small = received(pair.serverEvents());
        assertFalse(small.releasable(), "copied, and too small to be worth a release");
        assertEquals(filled(IN_PLACE_FROM - 1, 7), small.data());
        assertEquals(filled(IN_PLACE_FROM - 1, 7), bytesOf(small.buffer()));
        pair.client().tell(RdmaProtocol.Send.of(filled(IN_PLACE_FROM, 1)));
        pair.client().tell(RdmaProtocol.Send.of(filled(IN_PLACE_FROM, 2)));
        RdmaProtocol.Received first = received(pair.serverEvents());
        RdmaProtocol.Received second = received(pair.serverEvents());
        pair.client().tell(RdmaProtocol.Send.of(filled(IN_PLACE_FROM, 3)));
        pair.serverEvents().expectNoMessage(Duration.ofMillis(300));
        // an answer that releases what it answers: the third message may come once it is posted
        pair.server().tell(RdmaProtocol.Send.of(filled(8, 9), "answer").releasing(first));
        // the third message and the answer's Acked, in either order
        List<RdmaProtocol.ConnectionEvent> events = pair.serverEvents().receiveSeveralMessages(2, WAIT);
        assertTrue(events.contains(new RdmaProtocol.Acked("answer")), "acked: " + events);
        RdmaProtocol.Received third = (RdmaProtocol.Received) events.stream()
                .filter(e -> e instanceof RdmaProtocol.Received).findFirst().orElseThrow();
        assertEquals(filled(IN_PLACE_FROM, 3), bytesOf(third.buffer()));
        assertEquals(filled(8, 9), received(pair.clientEvents()).data());
        // the connecting end received in place too, as its Connect's options said
        pair.server().tell(RdmaProtocol.Send.of(filled(IN_PLACE_FROM, 4)));
        RdmaProtocol.Received atClient = received(pair.clientEvents());
        assertTrue(atClient.toString().contains("in place"), atClient.toString());
        assertEquals(filled(IN_PLACE_FROM, 4), bytesOf(atClient.buffer()));
        pair.client().tell(new RdmaProtocol.Release(atClient));
        pair.server().tell(new RdmaProtocol.Release(second));
        pair.server().tell(new RdmaProtocol.Release(third));
        assertNoLeaks(pair);
    }

    @Test
    void aMessageReceivedInPlaceGoesOnFromItsReceiveBuffer() {
        RdmaTestKit.Pair pair = connect("rdma-actors.receive-queue-depth = 2");
        pair.client().tell(RdmaProtocol.Send.of(filled(1024, 1)));
        pair.client().tell(RdmaProtocol.Send.of(filled(1024, 2)));
        RdmaProtocol.Received first = received(pair.serverEvents());
        RdmaProtocol.Received second = received(pair.serverEvents());

        // an echo from the receive buffer: the buffer goes back once the echo completed
        pair.server().tell(RdmaProtocol.Send.of(first.slice()).releasing(first));
        assertEquals(filled(1024, 1), bytesOf(received(pair.clientEvents()).buffer()));
        pair.client().tell(RdmaProtocol.Send.of(filled(1024, 3)));
        RdmaProtocol.Received third = received(pair.serverEvents());
        assertEquals(filled(1024, 3), bytesOf(third.buffer()), "it came in the buffer the echo gave back");
        assertTrue(first.slice() == null && !first.releasable());

        // a relay into the client's exported memory, released once acknowledged
        ByteBuffer exported = ByteBuffer.allocateDirect(1024);
        TestProbe<RdmaProtocol.ExportReply> exports = kit.probe();
        pair.client().tell(new RdmaProtocol.Export(exported, Set.of(Access.REMOTE_WRITE), exports.getRef()));
        RemoteRegion remote = exports.expectMessageClass(RdmaProtocol.Exported.class, WAIT).region();
        pair.server().tell(RdmaProtocol.Write.of(remote, 0, second.slice(), "relayed"));
        pair.serverEvents().expectMessage(WAIT, new RdmaProtocol.Acked("relayed"));
        assertEquals(filled(1024, 2), bytesOf(exported.duplicate().clear()));
        pair.server().tell(new RdmaProtocol.Release(second));

        LocalRegion receiveBuffers = third.slice().region();
        assertTrue(receiveBuffers.buffer().isReadOnly(), "the connection's, carrying other messages too");
        RdmaProtocol.Read intoReceiveBuffers = RdmaProtocol.Read.into(remote, 0, third.slice(), "into");
        pair.server().tell(intoReceiveBuffers);
        assertSame(intoReceiveBuffers, pair.serverEvents().expectMessageClass(RdmaProtocol.CommandFailed.class, WAIT)
                .command());
        TestProbe<RdmaProtocol.DeregisterMemoryReply> replies = kit.probe();
        pair.server().tell(new RdmaProtocol.DeregisterMemory(receiveBuffers, replies.getRef()));
        assertInstanceOf(IllegalArgumentException.class,
                replies.expectMessageClass(RdmaProtocol.CommandFailed.class, WAIT).cause());
        pair.server().tell(new RdmaProtocol.Release(third));
        assertNoLeaks(pair);
    }

    @Test
    void aReleaseToAnotherConnectionGivesNothingBack() {
        RdmaTestKit.Pair pair = connect("rdma-actors.receive-queue-depth = 2");
        RdmaTestKit.Pair other = kit.connect(listener, IN_PLACE);
        pair.client().tell(RdmaProtocol.Send.of(filled(1024, 1)));
        RdmaProtocol.Received held = received(pair.serverEvents());
        other.server().tell(new RdmaProtocol.Release(held));
        other.client().tell(RdmaProtocol.Send.of(filled(1024, 2)));
        RdmaProtocol.Received elsewhere = received(other.serverEvents());
        assertTrue(held.releasable(), "still held: only its own connection takes it back");
        assertEquals(filled(1024, 1), held.data());
        pair.server().tell(new RdmaProtocol.Release(held));
        other.server().tell(new RdmaProtocol.Release(elsewhere));
        kit.close(other);
        assertNoLeaks(pair);
    }

    @Test
    void aSendFromRegisteredMemoryCarriesItsBytesSmallOrLarge() {
        RdmaTestKit.Pair pair = connect("rdma-actors.buffer-size = 1024");
        ByteBuffer memory = ByteBuffer.allocateDirect(8192);
        for (int i = 0; i < memory.capacity(); i++) {
            memory.put(i, (byte) i);
        }
        LocalRegion region = register(pair.client(), memory);
        assertEquals(8192, region.length());
        pair.client().tell(RdmaProtocol.Send.of(region.slice(100, 900)).withAck("small"));
        pair.client().tell(RdmaProtocol.Send.of(region.slice(0, 8192)).withAck("large").withImmediate(5));
        RdmaProtocol.Received small = received(pair.serverEvents());
        assertEquals(bytesOf(memory.slice(100, 900)), small.data());
        RdmaProtocol.Received large = received(pair.serverEvents());
        assertEquals(bytesOf(memory.slice(0, 8192)), large.data(), "beyond buffer-size: by rendezvous");
        assertEquals(5, large.immediate());
        assertTrue(large.releasable(), "received in place too: in the memory the rendezvous read it into");
        pair.clientEvents().expectMessage(WAIT, new RdmaProtocol.Acked("small"));
        pair.clientEvents().expectMessage(WAIT, new RdmaProtocol.Acked("large"));
        pair.server().tell(new RdmaProtocol.Release(small));
        pair.server().tell(new RdmaProtocol.Release(large));
        assertNoLeaks(pair); // the region is still registered: the connection's end deregisters it
    }

    @Test
    void aLargeSendFromRegisteredMemoryIsReadWhereItIsSoItsRegionStaysUntilThePeerHasIt() {
        RdmaTestKit.Pair pair = connect("rdma-actors.buffer-size = 1024");
        ByteBuffer memory = ByteBuffer.allocateDirect(16384);
        for (int i = 0; i < memory.capacity(); i++) {
            memory.put(i, (byte) (i * 3));
        }
        LocalRegion region = register(pair.client(), memory);
        pair.client().tell(RdmaProtocol.Send.of(region.slice(4096, 8192)).withAck("large"));
        // told at once: a copy would free the region as soon as the announcement is posted, but
        // the peer reads these bytes where they are, so the region is deregistered after its Done
        pair.client().tell(new RdmaProtocol.DeregisterMemory(region, pair.clientEvents().getRef().narrow()));
        pair.clientEvents().expectMessage(WAIT, new RdmaProtocol.Acked("large"));
        assertEquals(region, pair.clientEvents().expectMessageClass(RdmaProtocol.MemoryDeregistered.class, WAIT)
                .region());
        assertEquals(bytesOf(memory.slice(4096, 8192)), received(pair.serverEvents()).data());
        assertNoLeaks(pair);
    }

    @Test
    void aLargeMessageReceivedInPlaceStaysInTheMemoryItWasReadIntoUntilReleased() {
        RdmaTestKit.Pair pair = connect("rdma-actors.buffer-size = 1024");
        pair.client().tell(RdmaProtocol.Send.of(filled(8192, 5)).withAck("large"));
        RdmaProtocol.Received large = received(pair.serverEvents());
        pair.clientEvents().expectMessage(WAIT, new RdmaProtocol.Acked("large"));
        assertTrue(large.releasable());
        assertEquals(8192, large.size());
        assertTrue(large.buffer().isReadOnly());
        assertEquals(filled(8192, 5), bytesOf(large.buffer()));
        assertNull(large.slice(), "not a receive buffer: nothing to send on from");
        // the memory it was read into stays registered until the release; a small message first,
        // which each end takes once its polls around the Done (which may grow its receives) are over
        pair.client().tell(RdmaProtocol.Send.of(filled(8, 1)));
        assertEquals(filled(8, 1), received(pair.serverEvents()).data());
        long held = kit.fabric().ledger().live(ResourceKind.MEMORY_REGION);
        pair.server().tell(new RdmaProtocol.Release(large));
        awaitLiveRegions(held - 1);
        assertFalse(large.releasable());
        assertThrows(IllegalStateException.class, large::data, "its memory may carry a later message");
        pair.server().tell(new RdmaProtocol.Release(large)); // a second release gives nothing back
        pair.client().tell(RdmaProtocol.Send.of(filled(8192, 6)));
        RdmaProtocol.Received next = received(pair.serverEvents());
        assertEquals(filled(8192, 6), bytesOf(next.buffer()));
        pair.server().tell(new RdmaProtocol.Release(next));
        assertNoLeaks(pair);
    }

    private void awaitLiveRegions(long expected) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (kit.fabric().ledger().live(ResourceKind.MEMORY_REGION) != expected && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertEquals(expected, kit.fabric().ledger().live(ResourceKind.MEMORY_REGION));
    }

    @Test
    void writesFromAndReadsIntoRegisteredMemoryGoBeyondTheBufferSize() {
        RdmaTestKit.Pair pair = connect("rdma-actors.buffer-size = 1024");
        ByteBuffer exported = ByteBuffer.allocateDirect(8192);
        TestProbe<RdmaProtocol.ExportReply> exports = kit.probe();
        pair.server().tell(new RdmaProtocol.Export(exported, Set.of(Access.REMOTE_READ, Access.REMOTE_WRITE),
                exports.getRef()));
        RemoteRegion remote = exports.expectMessageClass(RdmaProtocol.Exported.class, WAIT).region();
        ByteBuffer memory = ByteBuffer.allocateDirect(2 * 8192);
        for (int i = 0; i < 8192; i++) {
            memory.put(i, (byte) (i * 7));
        }
        LocalRegion region = register(pair.client(), memory);

        pair.client().tell(RdmaProtocol.Write.of(remote, 0, region.slice(0, 8192), "written").withImmediate(8192));
        pair.clientEvents().expectMessage(WAIT, new RdmaProtocol.Acked("written"));
        assertEquals(8192, received(pair.serverEvents()).immediate());
        assertEquals(bytesOf(memory.slice(0, 8192)), bytesOf(exported.duplicate().clear()));

        exported.put(100, (byte) 1); // the server changes a byte; the client reads the region back
        pair.client().tell(RdmaProtocol.Read.into(remote, 0, region.slice(8192, 8192), "read"));
        RdmaProtocol.ReadCompleted read = pair.clientEvents().expectMessageClass(RdmaProtocol.ReadCompleted.class,
                WAIT);
        assertEquals("read", read.token());
        assertTrue(read.data().isEmpty(), "the bytes are in the registered memory");
        assertEquals(bytesOf(exported.duplicate().clear()), bytesOf(memory.slice(8192, 8192)));
        assertEquals(1, memory.get(8192 + 100));

        RdmaProtocol.Read copied = RdmaProtocol.Read.of(remote, 0, 8192, "copied");
        pair.client().tell(copied);
        RdmaProtocol.CommandFailed refused = pair.clientEvents().expectMessageClass(RdmaProtocol.CommandFailed.class,
                WAIT);
        assertSame(copied, refused.command(), "a Read into a send buffer holds buffer-size at most");
        assertThrows(IllegalArgumentException.class,
                () -> new RdmaProtocol.Read(remote, 0, 16, "bad", null, region.slice(0, 8)));
        assertNoLeaks(pair);
    }

    @Test
    void registeredMemoryIsTheConnectionsOwnAndDeregistersOnceItsSendsCompleted() {
        RdmaTestKit.Pair pair = connect("");
        RdmaTestKit.Pair other = kit.connect(listener, IN_PLACE);
        LocalRegion region = register(pair.client(), ByteBuffer.allocateDirect(1024));
        region.buffer().put(filled(1024, 3).toArray());

        RdmaProtocol.Send elsewhere = RdmaProtocol.Send.of(region.slice(0, 16));
        other.client().tell(elsewhere);
        RdmaProtocol.CommandFailed refused = other.clientEvents().expectMessageClass(RdmaProtocol.CommandFailed.class,
                WAIT);
        assertSame(elsewhere, refused.command());
        assertInstanceOf(IllegalArgumentException.class, refused.cause());
        TestProbe<RdmaProtocol.DeregisterMemoryReply> replies = kit.probe();
        other.client().tell(new RdmaProtocol.DeregisterMemory(region, replies.getRef()));
        replies.expectMessageClass(RdmaProtocol.CommandFailed.class, WAIT);

        // the server reads nothing: the Send stays outstanding (receiver not ready), and the
        // deregistration waits for it
        pair.server().tell(new RdmaProtocol.SuspendReading());
        pair.serverEvents().expectNoMessage(Duration.ofMillis(200));
        for (int n = 0; n < RegisteredSlots.FIRST + 1; n++) {
            pair.client().tell(RdmaProtocol.Send.of(region.slice(0, 1024)));
        }
        pair.client().tell(new RdmaProtocol.DeregisterMemory(region, replies.getRef()));
        RdmaProtocol.Send late = RdmaProtocol.Send.of(region.slice(0, 1024));
        pair.client().tell(late);
        RdmaProtocol.CommandFailed lateRefused = pair.clientEvents().expectMessageClass(
                RdmaProtocol.CommandFailed.class, WAIT);
        assertSame(late, lateRefused.command());
        assertInstanceOf(IllegalStateException.class, lateRefused.cause());
        replies.expectNoMessage(Duration.ofMillis(200));
        pair.server().tell(new RdmaProtocol.ResumeReading());
        for (int n = 0; n < RegisteredSlots.FIRST + 1; n++) {
            RdmaProtocol.Received r = received(pair.serverEvents());
            assertEquals(filled(1024, 3), bytesOf(r.buffer()));
            pair.server().tell(new RdmaProtocol.Release(r));
        }
        assertEquals(region, replies.expectMessageClass(RdmaProtocol.MemoryDeregistered.class, WAIT).region());
        kit.close(other);
        assertNoLeaks(pair);
    }

    @Test
    void badRegistrationsAndStreamsThatWouldReceiveInPlaceAreRefusedWhereTheyAreMade() {
        kit = RdmaTestKit.create("");
        TestProbe<RdmaProtocol.RegisterMemoryReply> replies = kit.probe();
        assertThrows(IllegalArgumentException.class,
                () -> new RdmaProtocol.RegisterMemory(ByteBuffer.allocate(64), replies.getRef()));
        assertThrows(IllegalArgumentException.class, () -> RdmaProtocol.ConnectionOptions.none().withReceiveInPlace(0));
        assertThrows(IllegalArgumentException.class,
                () -> RdmaStreams.Options.defaults().withConnectionOptions(IN_PLACE));
    }
}
