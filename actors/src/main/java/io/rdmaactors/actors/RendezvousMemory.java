package io.rdmaactors.actors;

import java.nio.ByteBuffer;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.pekko.util.ByteString;
import org.apache.pekko.util.ByteStringBuilder;

/**
 * Direct memory for rendezvous messages, reused: a 16 MiB message would otherwise allocate (and
 * zero) 16 MiB on each side for each message. Buffers come in power-of-two sizes from 64 KiB;
 * what is returned is kept while the JVM's pool holds at most {@link #KEPT} bytes. A taker
 * registers only the slice its message needs, so what an earlier message left in a reused buffer
 * is never in a region a peer may read.
 */
final class RendezvousMemory {

    private static final int SMALLEST_CLASS = 16; // 64 KiB
    private static final int CLASSES = 31 - SMALLEST_CLASS;
    /** The most this JVM keeps for reuse. */
    static final long KEPT = 64L << 20;
    /** Below G1's humongous threshold: half a region, and a region is at least 1 MiB. */
    private static final int HEAP_PIECE = 128 << 10;

    /** Last given, first taken: the warmest buffer goes out again. */
    private static final List<Deque<ByteBuffer>> FREE = Stream.generate(ConcurrentLinkedDeque<ByteBuffer>::new)
            .limit(CLASSES).collect(Collectors.toUnmodifiableList());
    private static final AtomicLong KEPT_BYTES = new AtomicLong();

    private RendezvousMemory() {
    }

    /**
     * A read message's bytes as a ByteString that owns them, in pieces of 128 KiB: one array as
     * large as the message (up to max-message-size) would be a humongous allocation, zeroed outside
     * the young generation, slower than its pieces.
     */
    static ByteString copyOut(ByteBuffer message) {
        ByteStringBuilder pieces = ByteString.createBuilder();
        ByteBuffer from = message.duplicate();
        while (from.hasRemaining()) {
            byte[] piece = new byte[Math.min(HEAP_PIECE, from.remaining())];
            from.get(piece);
            pieces.putByteArrayUnsafe(piece);
        }
        return pieces.result();
    }

    /** A direct buffer of at least {@code size} bytes, position 0; its contents are undefined. */
    static ByteBuffer take(int size) {
        int c = sizeClass(size);
        if (c < 0) {
            return ByteBuffer.allocateDirect(size);
        }
        ByteBuffer b = FREE.get(c).pollFirst();
        if (b != null) {
            KEPT_BYTES.addAndGet(-b.capacity());
            return b.clear();
        }
        return ByteBuffer.allocateDirect(1 << (c + SMALLEST_CLASS));
    }

    /** Gives a buffer {@link #take} made back, once nothing (no memory region) uses it. */
    static void give(ByteBuffer b) {
        int c = sizeClass(b.capacity());
        if (c < 0 || b.capacity() != 1 << (c + SMALLEST_CLASS)) {
            return; // not one of the pool's sizes: the GC frees it
        }
        if (KEPT_BYTES.addAndGet(b.capacity()) > KEPT) {
            KEPT_BYTES.addAndGet(-b.capacity());
            return;
        }
        FREE.get(c).addFirst(b);
    }

    /** The class of a size: -1 below 64 KiB, else log2 of the size rounded up, less 16. */
    private static int sizeClass(int size) {
        if (size <= 0 || size < (1 << SMALLEST_CLASS)) {
            return -1;
        }
        int log = 32 - Integer.numberOfLeadingZeros(size - 1);
        return log - SMALLEST_CLASS < CLASSES ? log - SMALLEST_CLASS : -1;
    }
}
