package io.rdmaactors.actors;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaactors.verbs.Access;
import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.ProtectionDomain;
import io.rdmaactors.verbs.ResourceKind;
import java.nio.ByteBuffer;
import java.util.Set;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A connection's rendezvous memory without an actor: what a large Send exposes to the peer, and
 * that every region is deregistered once, whether its message went through, failed, or the
 * connection ended.
 */
class RendezvousRegionsTest {

    private Fabric fabric;
    private ProtectionDomain pd;
    private RendezvousRegions regions;

    @BeforeEach
    void start() {
        fabric = Fabric.open("soft");
        pd = fabric.devices().get(0).allocateProtectionDomain();
        regions = new RendezvousRegions(pd, false);
    }

    @AfterEach
    void stop() {
        pd.close();
        fabric.close();
    }

    private long registered() {
        return fabric.ledger().live(ResourceKind.MEMORY_REGION);
    }

    private static byte[] bytes(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 31);
        }
        return b;
    }

    @Test
    void aLargeSendExposesItsBytesAloneForRemoteReadUntilThePeerSaysDone() {
        byte[] message = bytes(100_000); // not a pooled size: the region must not show the rest of the buffer
        RdmaProtocol.Send send = RdmaProtocol.Send.of(ByteString.fromArray(message));
        RendezvousRegions.LargeSend large = regions.announce(send);
        MemoryRegion region = large.region();
        assertEquals(message.length, region.length(), "exactly the message");
        assertEquals(Set.of(Access.REMOTE_READ), region.access(), "the peer reads it, nothing more");
        byte[] exposed = new byte[message.length];
        region.buffer().get(exposed);
        assertArrayEquals(message, exposed);
        assertFalse(regions.nothingAnnounced());
        assertEquals(1, registered());

        assertSame(large, regions.done(large.id()));
        assertEquals(0, registered(), "deregistered once read");
        assertTrue(regions.nothingAnnounced());
        assertNull(regions.done(large.id()), "a second Done finds nothing");
        assertFalse(regions.fail(large), "nor does a failure after it: the Send was answered once");
    }

    /**
     * In a domain other connections share, the region's own key grants nothing: the peer reads
     * through a window whose next key the announcement carries, closed with the region.
     */
    @Test
    void inASharedDomainALargeSendIsReadThroughAWindowAlone() {
        RendezvousRegions shared = new RendezvousRegions(pd, true);
        RendezvousRegions.LargeSend large = shared.announce(RdmaProtocol.Send.of(ByteString.fromArray(bytes(50_000))));
        assertEquals(Set.of(Access.MW_BIND), large.region().access(), "no remote right of the region's own");
        assertNotNull(large.window());
        assertEquals(large.window().nextRkey(), large.rkey(), "the key the window's bind gives it");
        assertEquals(large.rkey(), large.bind(7).bind().rkey());
        assertEquals(Set.of(Access.REMOTE_READ), large.bind(7).bind().access());
        assertEquals(1, fabric.ledger().live(ResourceKind.MEMORY_WINDOW));
        assertSame(large, shared.done(large.id()));
        assertEquals(0, fabric.ledger().live(ResourceKind.MEMORY_WINDOW), "the window went with the region");
        assertEquals(0, registered());
        shared.announce(RdmaProtocol.Send.of(ByteString.fromArray(bytes(50_000))));
        shared.close();
        assertEquals(0, fabric.ledger().live(ResourceKind.MEMORY_WINDOW), "closed with the connection");
        assertEquals(0, registered());
    }

    @Test
    void aSendFromRegisteredMemoryIsReadWhereItIsAndHoldsTheRegionUntilDone() {
        MemoryRegion handlers = pd.register(ByteBuffer.allocateDirect(1 << 20));
        LocalRegion local = new LocalRegion(handlers, this, false);
        RendezvousRegions.LargeSend large = regions.announce(RdmaProtocol.Send.of(new LocalRegion.Slice(local, 4096, 200_000)));
        assertEquals(200_000, large.region().length(), "the slice alone is registered again");
        handlers.buffer().put(4096 + 5, (byte) 42);
        assertEquals(42, large.region().buffer().get(5), "the same memory: no copy");
        assertTrue(regions.anyAnnounced(l -> l.send().from().region() == local),
                "the handler's region may not go while the peer reads it");
        regions.done(large.id());
        assertFalse(regions.anyAnnounced(l -> l.send().from().region() == local));
        assertEquals(1, registered(), "only the handler's own registration is left");
        handlers.close();
    }

    @Test
    void aFailedSendAndAFailedReadAreDeregisteredAndAnsweredOnce() {
        RendezvousRegions.LargeSend large = regions.announce(RdmaProtocol.Send.of(ByteString.fromArray(bytes(70_000))));
        MemoryRegion readInto = regions.registerForRead(300_000);
        assertEquals(Set.of(Access.LOCAL_WRITE), readInto.access(), "what is read into is not the peer's");
        assertEquals(2, registered());
        assertTrue(regions.fail(large));
        assertFalse(regions.fail(large), "answered once");
        regions.release(readInto);
        regions.release(readInto);
        assertEquals(0, registered());
    }

    @Test
    void theConnectionsEndDeregistersWhatIsStillOutstanding() {
        RendezvousRegions.LargeSend large = regions.announce(RdmaProtocol.Send.of(ByteString.fromArray(bytes(70_000))));
        regions.registerForRead(70_000);
        assertEquals(1, regions.outstanding().size());
        assertSame(large, regions.outstanding().get(0));
        regions.close();
        assertEquals(0, registered());
        assertTrue(regions.nothingAnnounced());
    }
}
