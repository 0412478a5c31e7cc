package io.rdmaactors.actors;

import java.nio.ByteBuffer;
import org.apache.pekko.util.ByteString;

/**
 * What two QP actors tell each other besides the user's messages, as Sends with
 * {@link RdmaProtocol#RESERVED_IMMEDIATE}, big endian (the closing notice, which carries no bytes,
 * aside). A Send larger than a receive buffer goes by rendezvous, as MPI and UCX do it: the sender
 * registers the message for remote read and announces it ({@link Ready}); the receiver RDMA-reads it
 * into memory of its own and says {@link Done}, whereupon the sender deregisters it and acknowledges
 * the Send. A receiver on a shared receive queue, whose reader suspends, cannot hold its peer back by
 * leaving receives unposted (the queue serves every connection on it): it says {@link Pause}, and
 * the peer holds back what would take a receive until {@link Resume}.
 */
final class ControlMessage {

    private static final byte READY = 1;
    private static final byte DONE = 2;
    private static final byte PAUSE = 3;
    private static final byte RESUME = 4;
    /** The largest of them: what a receive buffer must hold at least. */
    static final int MAX_CONTROL_BYTES = 26;

    private ControlMessage() {
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

    /** The peer's reader suspended: post nothing that takes one of its receives until Resume. */
    record Pause() {
        static final Pause INSTANCE = new Pause();
        private static final ByteString ENCODED = ByteString.fromArrayUnsafe(new byte[] {PAUSE});
    }

    /** The peer reads again. */
    record Resume() {
        static final Resume INSTANCE = new Resume();
        private static final ByteString ENCODED = ByteString.fromArrayUnsafe(new byte[] {RESUME});
    }

    /** Pause or Resume, as it goes on the wire. */
    static ByteString flowControl(boolean pause) {
        return pause ? Pause.ENCODED : Resume.ENCODED;
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
        if (kind == PAUSE) {
            return Pause.INSTANCE;
        }
        if (kind == RESUME) {
            return Resume.INSTANCE;
        }
        throw new IllegalStateException("the peer sent a malformed control message (kind " + kind + ")");
    }
}
