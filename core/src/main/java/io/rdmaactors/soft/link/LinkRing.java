package io.rdmaactors.soft.link;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * One direction of a shared-memory link: a byte ring in memory both processes map, with one
 * writer and one reader at a time (the link's writer and reader), read and written as a socket
 * is, so that the link's framing does not change; the reader may also parse a whole frame where
 * it lies, then skip it. Positions only grow; the ring holds {@code head - tail} bytes. Neither
 * side blocks on it: a reader that goes to sleep says so in {@link #armReader}, and the writer
 * that finds it asleep rings the link's doorbell (a byte on its socket); a writer that finds the
 * ring full says so in {@link #awaitRoom}, and the reader that frees room rings it back. Each
 * flag is set before its side looks once more, and cleared by whoever rings, so no wake-up is
 * lost and each sleep takes one doorbell at most.
 */
final class LinkRing {

    /** The header: each counter on a cache line of its own, as the two processes write them. */
    static final int HEADER = 256;
    private static final int HEAD = 0;
    private static final int TAIL = 64;
    private static final int READER_ASLEEP = 128;
    private static final int WRITER_WAITING = 192;
    private static final VarHandle LONG = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());

    private final ByteBuffer header;
    private final ByteBuffer data;
    private final int capacity;
    private final int mask;
    /** The writer's position; only the writer's side uses it. */
    private long head;
    /**
     * The reader's position as the writer last read it, at most the real one: the room it leaves
     * is there, and the writer reads the reader's cache line again only when it needs more.
     */
    private long tailSeen;
    /** The reader's position; only the reader's side uses it. */
    private long tail;

    /** @param memory {@link #HEADER} bytes then the ring's, a power of two */
    LinkRing(ByteBuffer memory) {
        this.header = memory.slice(0, HEADER);
        this.data = memory.slice(HEADER, memory.capacity() - HEADER);
        this.capacity = data.capacity();
        if (Integer.bitCount(capacity) != 1) {
            throw new IllegalArgumentException("a ring of " + capacity + " bytes: a power of two is needed");
        }
        this.mask = capacity - 1;
        this.head = (long) LONG.getVolatile(header, HEAD);
        this.tail = (long) LONG.getVolatile(header, TAIL);
        this.tailSeen = tail;
    }

    // ---------------------------------------------------------------- the writer's side

    /** Copies what fits from the buffers, advancing their positions as a gathering write does; the bytes written. */
    long write(ByteBuffer[] sources, int offset, int length) {
        long room = capacity - (head - tailSeen);
        if (room < remaining(sources, offset, length)) {
            tailSeen = (long) LONG.getAcquire(header, TAIL);
            room = capacity - (head - tailSeen);
        }
        long written = 0;
        for (int i = offset; i < offset + length && room > 0; i++) {
            ByteBuffer s = sources[i];
            while (s.hasRemaining() && room > 0) {
                int at = (int) (head & mask);
                int n = (int) Math.min(Math.min(s.remaining(), room), capacity - at);
                data.put(at, s, s.position(), n);
                s.position(s.position() + n);
                head += n;
                room -= n;
                written += n;
            }
        }
        if (written > 0) {
            LONG.setVolatile(header, HEAD, head); // volatile: ordered before the look at READER_ASLEEP
        }
        return written;
    }

    private static long remaining(ByteBuffer[] sources, int offset, int length) {
        long n = 0;
        for (int i = offset; i < offset + length; i++) {
            n += sources[i].remaining();
        }
        return n;
    }

    /** After a write: true when the reader slept and this caller must ring the doorbell. */
    boolean wakeReader() {
        return (long) LONG.getVolatile(header, READER_ASLEEP) == 1 && LONG.compareAndSet(header, READER_ASLEEP, 1L, 0L);
    }

    /**
     * The ring is full: the writer waits for the reader's doorbell. False when it need not
     * (room came meanwhile: write again).
     */
    boolean awaitRoom() {
        LONG.setVolatile(header, WRITER_WAITING, 1L);
        tailSeen = (long) LONG.getVolatile(header, TAIL);
        if (capacity - (head - tailSeen) > 0) {
            // a doorbell the reader may still ring is a spare wake-up, nothing worse
            LONG.compareAndSet(header, WRITER_WAITING, 1L, 0L);
            return false;
        }
        return true;
    }

    // ---------------------------------------------------------------- the reader's side

    /** Copies what the ring holds into the buffer's remaining space; the bytes read. */
    int read(ByteBuffer target) {
        int n = (int) Math.min(available(), target.remaining());
        if (n == 0) {
            return 0;
        }
        int at = (int) (tail & mask);
        int first = Math.min(n, capacity - at);
        target.put(target.position(), data, at, first);
        if (first < n) {
            target.put(target.position() + first, data, 0, n - first);
        }
        target.position(target.position() + n);
        tail += n;
        LONG.setVolatile(header, TAIL, tail); // volatile: ordered before the look at WRITER_WAITING
        return n;
    }

    /** The bytes written and not yet read. */
    long available() {
        return (long) LONG.getAcquire(header, HEAD) - tail;
    }

    /**
     * The next frame's length word (a frame is that word, then that many bytes), read across the
     * wrap; 4 bytes must be available.
     */
    int frameLength() {
        int at = (int) (tail & mask);
        if (at <= capacity - 4) {
            return data.getInt(at);
        }
        int length = 0;
        for (int i = 0; i < 4; i++) {
            length = length << 8 | (data.get((at + i) & mask) & 0xFF);
        }
        return length;
    }

    /**
     * Where the next {@code size} bytes, available, lie in {@link #bytes}, to parse there and then
     * {@link #skip}; -1 when they wrap.
     */
    int inPlace(int size) {
        int at = (int) (tail & mask);
        return size <= capacity - at ? at : -1;
    }

    /** The ring's bytes, for the reader to parse a frame where it lies ({@link #inPlace}); not to write. */
    ByteBuffer bytes() {
        return data;
    }

    /** Takes {@code n} bytes read where they lie ({@link #inPlace}). */
    void skip(int n) {
        tail += n;
        LONG.setVolatile(header, TAIL, tail); // volatile: ordered before the look at WRITER_WAITING
    }

    /**
     * Nothing to read: a look at the writer's position, no more. Any thread may ask; one that
     * does not hold the reader's side may see an older read position, and take an empty ring for
     * one that holds bytes, not the other way round.
     */
    boolean isEmpty() {
        return available() == 0;
    }

    /** After a read: true when the writer waits for room and this caller must ring the doorbell. */
    boolean wakeWriter() {
        return (long) LONG.getVolatile(header, WRITER_WAITING) == 1
                && LONG.compareAndSet(header, WRITER_WAITING, 1L, 0L);
    }

    /**
     * The reader goes to sleep: the next write rings the doorbell. False when it must not (bytes
     * came meanwhile: read again).
     */
    boolean armReader() {
        LONG.setVolatile(header, READER_ASLEEP, 1L);
        if ((long) LONG.getVolatile(header, HEAD) != tail) {
            LONG.compareAndSet(header, READER_ASLEEP, 1L, 0L);
            return false;
        }
        return true;
    }

    int capacity() {
        return capacity;
    }
}
