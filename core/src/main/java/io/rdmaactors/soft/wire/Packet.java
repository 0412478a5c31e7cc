package io.rdmaactors.soft.wire;

import io.rdmaactors.verbs.SendOpcode;
import java.nio.ByteBuffer;

/**
 * A transport packet between soft QPs: a request from a requester, or a response from a responder.
 * One packet carries a whole message (the soft fabric does not segment by MTU), but for a READ's
 * response over a link, which goes in segments so that the requester scatters each while the next
 * is still on its way.
 *
 * @param status for NAK_ERROR the WcStatus code the requester completes with; for NAK_RNR the
 *               responder's RNR delay in nanoseconds
 * @param port   the responder port the packet is addressed to (its path's destination)
 * @param data   the payload from its position to its limit, or null; read it with absolute gets. A
 *               packet read from a TCP link is a view of the link's buffer, valid until the
 *               handler it was given to returns.
 */
public record Packet(Kind kind, long psn, int opcode, int flags, int immData, long remoteAddress, int rkey, int length,
              long compareAdd, long swap, long status, int port, ByteBuffer data) {

    public enum Kind { REQUEST, ACK, NAK_RNR, NAK_ERROR, READ_RESPONSE, ATOMIC_RESPONSE }

    public static final Kind[] KINDS = Kind.values();
    public static final SendOpcode[] OPCODES = SendOpcode.values();

    public static final int SOLICITED = 1;
    public static final int WITH_IMM = 2;
    /** Sent on the alternate path after a migration: the responder migrates too (MigReq bit). */
    public static final int MIGRATED = 4;
    /** A segment of a READ's response that more segments follow. */
    public static final int MORE = 8;

    /** An ACK's credit count when the responder takes its receives from an SRQ: IB's "invalid". */
    public static final int UNLIMITED_CREDITS = -1;

    /**
     * @param credits receives the responder has posted and not used yet, after this request (end-
     *                to-end flow control), or {@link #UNLIMITED_CREDITS}; carried in the length field
     */
    public static Packet ack(long psn, int credits) {
        return new Packet(Kind.ACK, psn, 0, 0, 0, 0, 0, credits, 0, 0, 0, 0, null);
    }

    /** An ACK's credit count. */
    public int credits() {
        return length;
    }

    public static Packet rnrNak(long psn, long delayNanos) {
        return new Packet(Kind.NAK_RNR, psn, 0, 0, 0, 0, 0, 0, 0, 0, delayNanos, 0, null);
    }

    public static Packet errorNak(long psn, int wcStatus) {
        return new Packet(Kind.NAK_ERROR, psn, 0, 0, 0, 0, 0, 0, 0, 0, wcStatus, 0, null);
    }

    public static Packet readResponse(long psn, ByteBuffer data) {
        return new Packet(Kind.READ_RESPONSE, psn, 0, 0, 0, 0, 0, data.remaining(), 0, 0, 0, 0, data);
    }

    /** A segment of a READ's response: its data lies at {@code offset} of what was read (in the address field). */
    public static Packet readResponseSegment(long psn, long offset, ByteBuffer data, boolean more) {
        return new Packet(Kind.READ_RESPONSE, psn, 0, more ? MORE : 0, 0, offset, 0, data.remaining(), 0, 0, 0, 0,
                data);
    }

    /** Where a READ response's data lies in what was read: 0 unless it is a later segment. */
    public long offset() {
        return remoteAddress;
    }

    public static Packet atomicResponse(long psn, long original) {
        return new Packet(Kind.ATOMIC_RESPONSE, psn, 0, 0, 0, 0, 0, 8, original, 0, 0, 0, null);
    }

    public boolean isRequest() {
        return kind == Kind.REQUEST;
    }
}
