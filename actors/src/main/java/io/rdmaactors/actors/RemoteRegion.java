package io.rdmaactors.actors;

import java.nio.ByteBuffer;
import org.apache.pekko.util.ByteString;

/**
 * Memory a peer exported for RDMA: its address, length and rkey, what {@code Export} answers with.
 * To let the peer in, send it: in Accept or Connect private data ({@link #toBytes}) or as a message
 * ({@link #toByteString}); the wire encoding (20 bytes, big endian: address, length, rkey) is stable.
 */
public record RemoteRegion(long address, long length, int rkey) {

    public static final int ENCODED_BYTES = 20;

    public byte[] toBytes() {
        return ByteBuffer.allocate(ENCODED_BYTES).putLong(address).putLong(length).putInt(rkey).array();
    }

    public ByteString toByteString() {
        return ByteString.fromArrayUnsafe(toBytes());
    }

    public static RemoteRegion fromBytes(byte[] bytes) {
        return fromBytes(ByteBuffer.wrap(bytes));
    }

    /** A region sent as a message, e.g. a {@code Received}'s data. */
    public static RemoteRegion fromBytes(ByteString bytes) {
        return fromBytes(bytes.asByteBuffer());
    }

    /** Reads one region at the buffer's position, advancing it. */
    public static RemoteRegion fromBytes(ByteBuffer buffer) {
        if (buffer.remaining() < ENCODED_BYTES) {
            throw new IllegalArgumentException("a remote region takes " + ENCODED_BYTES + " bytes, "
                    + buffer.remaining() + " left");
        }
        return new RemoteRegion(buffer.getLong(), buffer.getLong(), buffer.getInt());
    }

    /** The address {@code offset} bytes in, checked against the region's length. */
    public long at(long offset, long span) {
        if (offset < 0 || span < 0 || offset + span > length) {
            throw new IllegalArgumentException("range " + offset + "+" + span + " is outside the region of "
                    + length + " bytes");
        }
        return address + offset;
    }
}
