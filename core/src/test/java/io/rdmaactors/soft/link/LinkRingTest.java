package io.rdmaactors.soft.link;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The shared-memory ring and its file: bytes across the wrap in order, a full ring that makes its
 * writer wait for a doorbell, a reader that sleeps only on an empty ring, the look a poll takes
 * before it reads, a stream between two threads whole and in order, and files that do not outlive
 * the handshake or a process that died in it.
 */
class LinkRingTest {

    private static final int CAPACITY = 4096;
    /** The listener a link's file would be offered to, named in what is logged. */
    private static final InetSocketAddress PEER = new InetSocketAddress(InetAddress.getLoopbackAddress(), 7174);

    private static LinkRing ring(ByteBuffer memory) {
        return new LinkRing(memory);
    }

    private static ByteBuffer memory() {
        return ByteBuffer.allocateDirect(LinkRing.HEADER + CAPACITY);
    }

    private static byte[] bytes(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    /** A frame as the link writes one: its length, then that many bytes. */
    private static ByteBuffer frame(byte[] body) {
        return ByteBuffer.allocate(4 + body.length).putInt(body.length).put(body).flip();
    }

    @Test
    void aFrameIsReadWhereItLiesUnlessItWrapsAndItsLengthIsReadAcrossTheWrap() {
        ByteBuffer shared = memory();
        LinkRing writer = ring(shared);
        LinkRing reader = ring(shared);
        // 1365 bytes a frame in a ring of 4096: some frames wrap, and the fourth one's length word
        // does (it starts at 4095)
        byte[] body = bytes(1361, 1);
        byte[] got = new byte[body.length];
        for (int round = 0; round < 8; round++) {
            ByteBuffer whole = frame(body);
            writer.write(new ByteBuffer[] {whole.slice(0, 2)}, 0, 1);
            assertEquals(2, reader.available(), "round " + round + ": half a length word");
            writer.write(new ByteBuffer[] {whole.slice(2, whole.limit() - 2)}, 0, 1);
            assertEquals(1365, reader.available());
            assertEquals(1361, reader.frameLength(), "round " + round);
            int where = reader.inPlace(1365);
            long at = 1365L * round % CAPACITY;
            if (at + 1365 <= CAPACITY) {
                assertEquals(at, where, "round " + round + ": it does not wrap, it lies at the read position");
                reader.bytes().get(where + 4, got);
                assertArrayEquals(body, got);
                reader.skip(1365);
            } else {
                assertEquals(-1, where, "round " + round + ": it wraps");
                ByteBuffer copied = ByteBuffer.allocate(1365);
                assertEquals(1365, reader.read(copied));
                copied.flip().getInt();
                copied.get(got);
                assertArrayEquals(body, got, "across the wrap in order");
            }
            assertTrue(reader.isEmpty());
        }
    }

    @Test
    void bytesCrossTheWrapInOrderAndAFullRingTakesNoMore() {
        ByteBuffer shared = memory();
        LinkRing writer = ring(shared);
        LinkRing reader = ring(shared);
        ByteBuffer target = ByteBuffer.allocate(CAPACITY);
        for (int round = 0; round < 5; round++) {
            // 3000 bytes a round: every round but the first wraps at a different place
            byte[] first = bytes(1000, round);
            byte[] second = bytes(2000, -round);
            ByteBuffer[] gather = {ByteBuffer.wrap(first), ByteBuffer.wrap(second)};
            assertEquals(3000, writer.write(gather, 0, 2));
            assertFalse(gather[0].hasRemaining() || gather[1].hasRemaining(), "positions advance as a socket's write");
            target.clear();
            assertEquals(3000, reader.read(target));
            byte[] got = new byte[3000];
            target.flip().get(got);
            byte[] expected = new byte[3000];
            System.arraycopy(first, 0, expected, 0, 1000);
            System.arraycopy(second, 0, expected, 1000, 2000);
            assertArrayEquals(expected, got, "round " + round);
        }
        ByteBuffer tooMuch = ByteBuffer.wrap(bytes(CAPACITY + 100, 7));
        assertEquals(CAPACITY, writer.write(new ByteBuffer[] {tooMuch}, 0, 1), "a full ring");
        assertEquals(100, tooMuch.remaining());
        assertEquals(0, writer.write(new ByteBuffer[] {tooMuch}, 0, 1), "takes nothing more");
        ByteBuffer small = ByteBuffer.allocate(10);
        assertEquals(10, reader.read(small), "a read takes what its buffer has room for");
    }

    @Test
    void aWriterWaitingForRoomIsWokenOnceByTheReadThatFreesIt() {
        ByteBuffer shared = memory();
        LinkRing writer = ring(shared);
        LinkRing reader = ring(shared);
        writer.write(new ByteBuffer[] {ByteBuffer.wrap(new byte[CAPACITY])}, 0, 1);
        assertTrue(writer.awaitRoom(), "full: the writer waits for the reader's doorbell");
        assertEquals(1, reader.read(ByteBuffer.allocate(1)));
        assertTrue(reader.wakeWriter(), "the read that freed room rings");
        assertFalse(reader.wakeWriter(), "once");
        assertFalse(writer.awaitRoom(), "with room the writer does not wait");
        assertFalse(reader.wakeWriter(), "and hears no doorbell");
    }

    @Test
    void aReaderSleepsOnlyOnAnEmptyRingAndTheNextWriteWakesItOnce() {
        ByteBuffer shared = memory();
        LinkRing writer = ring(shared);
        LinkRing reader = ring(shared);
        assertTrue(reader.armReader(), "empty: the reader sleeps");
        assertEquals(1, writer.write(new ByteBuffer[] {ByteBuffer.wrap(new byte[1])}, 0, 1));
        assertTrue(writer.wakeReader(), "the first write rings");
        assertEquals(1, writer.write(new ByteBuffer[] {ByteBuffer.wrap(new byte[1])}, 0, 1));
        assertFalse(writer.wakeReader(), "the next does not: one doorbell a sleep");
        assertFalse(reader.armReader(), "bytes wait: the reader must not sleep");
        assertFalse(writer.wakeReader(), "and a writer need not ring");
        assertEquals(2, reader.read(ByteBuffer.allocate(8)));
        assertTrue(reader.armReader());
    }

    @Test
    void aRingIsEmptyUntilAWriteAndAgainOnceAllOfItIsRead() {
        ByteBuffer shared = memory();
        LinkRing writer = ring(shared);
        LinkRing reader = ring(shared);
        assertTrue(reader.isEmpty());
        writer.write(new ByteBuffer[] {ByteBuffer.wrap(new byte[3])}, 0, 1);
        assertFalse(reader.isEmpty(), "a poll that looks first must not miss the write");
        assertEquals(2, reader.read(ByteBuffer.allocate(2)));
        assertFalse(reader.isEmpty(), "a byte left");
        assertEquals(1, reader.read(ByteBuffer.allocate(8)));
        assertTrue(reader.isEmpty());
        // across the wrap, where the positions no longer equal the offsets
        writer.write(new ByteBuffer[] {ByteBuffer.wrap(new byte[CAPACITY])}, 0, 1);
        assertFalse(reader.isEmpty());
        assertEquals(CAPACITY, reader.read(ByteBuffer.allocate(CAPACITY)));
        assertTrue(reader.isEmpty());
    }

    @Test
    void aStreamBetweenTwoThreadsArrivesWholeAndInOrderWhateverTheSizesOfWritesAndReads() throws Exception {
        ByteBuffer shared = memory();
        LinkRing writer = ring(shared);
        LinkRing reader = ring(shared);
        int total = 8 << 20;
        CompletableFuture<Void> written = CompletableFuture.runAsync(() -> {
            Random sizes = new Random(1);
            int sent = 0;
            while (sent < total) {
                // a gathering write of up to three buffers, some larger than the ring
                ByteBuffer[] gather = new ByteBuffer[1 + sizes.nextInt(3)];
                for (int i = 0; i < gather.length; i++) {
                    byte[] b = new byte[Math.min(total - sent, sizes.nextInt(CAPACITY + 512))];
                    for (int k = 0; k < b.length; k++) {
                        b[k] = (byte) (sent + k);
                    }
                    sent += b.length;
                    gather[i] = ByteBuffer.wrap(b);
                }
                while (Arrays.stream(gather).anyMatch(ByteBuffer::hasRemaining)) {
                    if (writer.write(gather, 0, gather.length) == 0) {
                        Thread.onSpinWait();
                    }
                }
            }
        });
        Random sizes = new Random(2);
        int received = 0;
        while (received < total) {
            ByteBuffer target = ByteBuffer.allocate(1 + sizes.nextInt(CAPACITY));
            int n = reader.read(target);
            for (int k = 0; k < n; k++) {
                assertEquals((byte) (received + k), target.get(k), "byte " + (received + k));
            }
            received += n;
            // the writer done and the ring empty before the last byte: bytes were lost (or the writer failed)
            assertFalse(n == 0 && written.isDone() && reader.isEmpty() && received < total, "only " + received + " bytes came");
        }
        written.get(10, TimeUnit.SECONDS);
        assertTrue(reader.isEmpty());
    }

    @Test
    void theFileIsGoneOnceBothSidesMappedIt() {
        LinkSharedMemory.Offered offered = LinkSharedMemory.create(CAPACITY, PEER);
        assertNotNull(offered, "this host has a place for shared memory");
        assertTrue(Files.exists(offered.file()));
        LinkSharedMemory accepted = LinkSharedMemory.open(offered.offer());
        assertNotNull(accepted);
        assertFalse(Files.exists(offered.file()), "deleted by the side that mapped it last");

        ByteBuffer message = ByteBuffer.wrap(bytes(100, 3));
        offered.memory().out().write(new ByteBuffer[] {message}, 0, 1);
        assertTrue(offered.memory().out().wakeReader(), "a new ring's reader is asleep: the first frame rings");
        ByteBuffer got = ByteBuffer.allocate(100);
        assertEquals(100, accepted.in().read(got));
        assertArrayEquals(bytes(100, 3), got.array(), "what one side wrote the other read");
        assertNull(LinkSharedMemory.open(offered.offer()), "an offer is taken once");
    }

    /**
     * The file's memory is taken when it is made, not at a ring's first write into each page: a
     * file system with no room left then fails the link's making (it goes over TCP) instead of
     * faulting a write in the middle of a frame.
     */
    @Test
    void theFileTakesItsMemoryWhenItIsMade() throws Exception {
        int ring = 1 << 20;
        LinkSharedMemory.Offered offered = LinkSharedMemory.create(ring, PEER);
        assertNotNull(offered);
        try {
            Process stat = new ProcessBuilder("stat", "-c", "%b %B", offered.file().toString()).start();
            String[] blocks = new String(stat.getInputStream().readAllBytes()).trim().split(" ");
            assertTrue(stat.waitFor(10, TimeUnit.SECONDS));
            long allocated = Long.parseLong(blocks[0]) * Long.parseLong(blocks[1]);
            assertTrue(allocated >= 2L * ring, allocated + " bytes allocated to a file of two " + ring + "-byte rings");
        } finally {
            offered.unlink();
        }
    }

    @Test
    void anOfferNamingAnotherSizeOrNoFileIsRefused() {
        LinkSharedMemory.Offered offered = LinkSharedMemory.create(CAPACITY, PEER);
        assertNotNull(offered);
        LinkSharedMemory.Offer offer = offered.offer();
        assertNull(LinkSharedMemory.open(new LinkSharedMemory.Offer(offer.pid(), offer.id(), 2 * CAPACITY)),
                "the file is not what the offer says");
        assertNull(LinkSharedMemory.open(new LinkSharedMemory.Offer(offer.pid(), offer.id(), 3000)), "not a power of two");
        assertNull(LinkSharedMemory.open(new LinkSharedMemory.Offer(offer.pid(), new byte[16], CAPACITY)), "no such file");
        offered.unlink();
        assertFalse(Files.exists(offered.file()));
    }

    @Test
    void theFileOfAProcessThatDiedInItsHandshakeIsDeletedByTheNext() throws Exception {
        Process gone = new ProcessBuilder("true").start();
        assertTrue(gone.waitFor(10, TimeUnit.SECONDS));
        LinkSharedMemory.Offered offered = LinkSharedMemory.create(CAPACITY, PEER);
        assertNotNull(offered);
        Path stale = offered.file().resolveSibling("rdma-actors-link-" + gone.pid() + "-"
                + HexFormat.of().formatHex(new byte[16]));
        Files.write(stale, new byte[1]);
        offered.unlink();
        try {
            LinkSharedMemory.Offered next = LinkSharedMemory.create(CAPACITY, PEER);
            assertNotNull(next);
            next.unlink();
            assertFalse(Files.exists(stale), "its creator is no longer running");
        } finally {
            Files.deleteIfExists(stale);
        }
    }
}
