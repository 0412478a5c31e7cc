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
        if (size < MIN_SIZE) {
            throw new IllegalArgumentException("a message takes at least " + MIN_SIZE + " bytes, not " + size);
        }
        byte[] data = new byte[size];
        ByteBuffer.wrap(data).putInt(seq);
        for (int i = MIN_SIZE; i < size; i++) {
            data[i] = (byte) (seq * 31 + i);
        }
        return data;
    }

    /** The sequence number of an intact message of {@code size} bytes, or -1 if any byte is wrong. */
    static int check(byte[] data, int size) {
        if (data.length != size) {
            return -1;
        }
        int seq = ByteBuffer.wrap(data).getInt();
        for (int i = MIN_SIZE; i < size; i++) {
            if (data[i] != (byte) (seq * 31 + i)) {
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
