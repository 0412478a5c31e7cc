package io.rdmaactors.cluster;

import io.rdmaactors.actors.RdmaProtocol;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * What a member's connection request says in its private data: which incarnation dials (its
 * unique address's uid, which the accepting member knows from membership) and what for: the
 * pair's connection, or a Streams connection to a channel. A uid, not an address, because a
 * request carries at most {@link RdmaProtocol.Connect#MAX_PRIVATE_DATA} bytes.
 *
 * @param channel the channel of a Streams connection; empty: the pair's connection
 */
record DialRequest(long uid, String channel) {

    private static final byte CONNECTION = 'C';
    private static final byte STREAM = 'S';
    /** What a channel's name may take of the private data: all but the kind and the uid. */
    static final int MAX_CHANNEL_BYTES = RdmaProtocol.Connect.MAX_PRIVATE_DATA - 1 - Long.BYTES;

    static DialRequest connection(long uid) {
        return new DialRequest(uid, "");
    }

    /** A Streams connection to {@code channel}: a name of 1 to {@link #MAX_CHANNEL_BYTES} bytes of UTF-8, no NUL. */
    static DialRequest stream(long uid, String channel) {
        int bytes = channel.getBytes(StandardCharsets.UTF_8).length;
        if (bytes == 0 || bytes > MAX_CHANNEL_BYTES || channel.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("a channel's name takes 1 to " + MAX_CHANNEL_BYTES
                    + " bytes of UTF-8 and no NUL, not " + bytes + ": '" + channel + "'");
        }
        return new DialRequest(uid, channel);
    }

    boolean isStream() {
        return !channel.isEmpty();
    }

    byte[] toBytes() {
        byte[] name = channel.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(1 + Long.BYTES + name.length).put(isStream() ? STREAM : CONNECTION).putLong(uid)
                .put(name).array();
    }

    /**
     * The request in {@code privateData}; empty where it is none of a member's. The name ends at
     * the first zero byte: the IB CM hands the listener a REQ's private data padded to its 56 bytes.
     */
    static Optional<DialRequest> parse(byte[] privateData) {
        if (privateData.length < 1 + Long.BYTES) {
            return Optional.empty();
        }
        ByteBuffer b = ByteBuffer.wrap(privateData);
        byte kind = b.get();
        long uid = b.getLong();
        int end = b.position();
        while (end < privateData.length && privateData[end] != 0) {
            end++;
        }
        String channel = new String(privateData, b.position(), end - b.position(), StandardCharsets.UTF_8);
        if (kind == CONNECTION && channel.isEmpty()) {
            return Optional.of(connection(uid));
        }
        if (kind == STREAM && !channel.isEmpty()) {
            return Optional.of(new DialRequest(uid, channel));
        }
        return Optional.empty();
    }
}
