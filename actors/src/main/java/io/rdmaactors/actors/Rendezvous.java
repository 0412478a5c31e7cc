package io.rdmaactors.actors;

import java.nio.ByteBuffer;
import org.apache.pekko.util.ByteString;

/**
 * The control messages that carry a Send larger than a receive buffer, as MPI and UCX do it: the
 * sender registers the message for remote read and announces it ({@link Ready}); the receiver
 * RDMA-reads it into memory of its own and says {@link Done}, whereupon the sender deregisters it
 * and acknowledges the Send. Both travel as Sends with {@link RdmaProtocol#RESERVED_IMMEDIATE},
 * big endian.
 */
final class Rendezvous {

    private static final byte READY = 1;
    private static final byte DONE = 2;
    /** The larger of the two: what a receive buffer must hold at least. */
    static final int MAX_CONTROL_BYTES = 26;

    private Rendezvous() {
    }

    /** A message of {@code length} bytes waits at {@code address} (rkey {@code rkey}) for the peer to read. */
    record Ready(int id, int length, long address, int rkey, Integer immediate) {
        ByteString encode() {
            ByteBuffer b = ByteBuffer.allocate(MAX_CONTROL_BYTES).put(READY).putInt(id).putInt(length).putLong(address)
                    .putInt(rkey).put((byte) (immediate == null ? 0 : 1)).putInt(immediate == null ? 0 : immediate);
            return ByteString.fromArrayUnsafe(b.array());
        }
    }

    /** The peer has read message {@code id}: its memory may go. */
    record Done(int id) {
        ByteString encode() {
            return ByteString.fromArrayUnsafe(ByteBuffer.allocate(5).put(DONE).putInt(id).array());
        }
    }

    /** Reads a control message from a receive buffer. */
    static Object decode(ByteBuffer b) {
        byte kind = b.get();
        if (kind == READY && b.remaining() >= MAX_CONTROL_BYTES - 1) {
            int id = b.getInt();
            int length = b.getInt();
            long address = b.getLong();
            int rkey = b.getInt();
            boolean hasImmediate = b.get() != 0;
            int immediate = b.getInt();
            return new Ready(id, length, address, rkey, hasImmediate ? immediate : null);
        }
        if (kind == DONE && b.remaining() >= 4) {
            return new Done(b.getInt());
        }
        throw new IllegalStateException("the peer sent a malformed rendezvous message (kind " + kind + ")");
    }
}
