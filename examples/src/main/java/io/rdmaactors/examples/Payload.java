package io.rdmaactors.examples;

import java.nio.ByteBuffer;
import org.apache.pekko.util.ByteString;

/**
 * Message contents every program can check byte for byte: a 4-byte sequence number, then a
 * pattern derived from it, so a lost, repeated, misrouted or corrupted message shows.
 */
final class Payload {

    static final int MIN_SIZE = 4;

    private Payload() {
    }

    static byte[] of(int seq, int size) {
        byte[] data = new byte[size];
        write(ByteBuffer.wrap(data), seq, size);
        return data;
    }

    /** Writes message {@code seq} of {@code size} bytes from index 0 of {@code into}, e.g. registered memory. */
    static void write(ByteBuffer into, int seq, int size) {
        if (size < MIN_SIZE) {
            throw new IllegalArgumentException("a message takes at least " + MIN_SIZE + " bytes, not " + size);
        }
        into.putInt(0, seq);
        for (int i = MIN_SIZE; i < size; i++) {
            into.put(i, (byte) (seq * 31 + i));
        }
    }

    /** The sequence number of an intact message of {@code size} bytes, or -1 if any byte is wrong. */
    static int check(byte[] data, int size) {
        return check(ByteBuffer.wrap(data), size);
    }

    /** The same for the bytes from the buffer's position to its limit, e.g. a message received in place. */
    static int check(ByteBuffer data, int size) {
        if (data.remaining() != size) {
            return -1;
        }
        int at = data.position();
        int seq = data.getInt(at);
        for (int i = MIN_SIZE; i < size; i++) {
            if (data.get(at + i) != (byte) (seq * 31 + i)) {
                return -1;
            }
        }
        return seq;
    }

    static int check(ByteString data, int size) {
        return check(data.toArrayUnsafe(), size);
    }

    /** A few ints, for private data and short replies. */
    static byte[] ints(int... values) {
        ByteBuffer data = ByteBuffer.allocate(4 * values.length);
        for (int v : values) {
            data.putInt(v);
        }
        return data.array();
    }

    static int first(byte[] twoInts) {
        return ByteBuffer.wrap(twoInts).getInt(0);
    }

    static int second(byte[] twoInts) {
        return ByteBuffer.wrap(twoInts).getInt(4);
    }

    static int third(byte[] threeInts) {
        return ByteBuffer.wrap(threeInts).getInt(8);
    }

    static int first(ByteString twoInts) {
        return twoInts.asByteBuffer().getInt(0);
    }

    static int second(ByteString twoInts) {
        return twoInts.asByteBuffer().getInt(4);
    }
}
