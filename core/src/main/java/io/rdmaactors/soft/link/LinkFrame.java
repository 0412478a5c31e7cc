package io.rdmaactors.soft.link;

import io.rdmaactors.soft.wire.CmMessage;
import io.rdmaactors.soft.wire.Packet;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ProtocolException;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A frame on a {@link TcpLink}, and the wire format: a length, a tag, the number of the
 * connection on the link it belongs to, then a transport packet, a CM message, or nothing (the
 * connection ended on the sender's side). Every length read from the wire is checked before
 * anything is sized by it.
 *
 * @param connection the connection it belongs to (on the sending side)
 * @param packet     the packet, for a {@link #PACKET} frame
 * @param cm         the CM message, for a {@link #CM} frame; neither: a {@link #CLOSE} frame
 */
public record LinkFrame(LinkConnection connection, Packet packet, CmMessage cm) {

    public static final byte PACKET = 0;
    public static final byte CM = 1;
    public static final byte CLOSE = 2;

    /** The largest message between processes, as a port's max_msg_sz (2^30 on most HCAs). */
    public static final int LARGEST_MESSAGE = 1 << 30;
    /** Length, tag, connection. */
    public static final int PREFIX = 4 + 1 + 4;
    /** Where each field of a packet's header lies, in the order encode() writes them. */
    private static final int KIND = 0;
    private static final int PSN = KIND + 1;
    private static final int OPCODE = PSN + 8;
    private static final int FLAGS = OPCODE + 1;
    private static final int IMMEDIATE = FLAGS + 4;
    private static final int REMOTE_ADDRESS = IMMEDIATE + 4;
    private static final int RKEY = REMOTE_ADDRESS + 8;
    private static final int LENGTH = RKEY + 4;
    private static final int COMPARE_ADD = LENGTH + 4;
    private static final int SWAP = COMPARE_ADD + 8;
    private static final int STATUS = SWAP + 8;
    private static final int PORT = STATUS + 8;
    private static final int DATA_LENGTH = PORT + 1;
    private static final int PACKET_HEADER = DATA_LENGTH + 4;
    /**
     * Type, qpn, psn, gid, port, status, responder resources, initiator depth, retry count, RNR
     * retry count, private data length; then the data and two addresses.
     */
    private static final int CM_HEADER = 1 + 4 + 8 + 16 + 4 + 4 + 4 + 2;
    /** The most private data any CM message carries (an accept's). */
    private static final int MAX_PRIVATE_DATA = 196;
    private static final int MAX_CM = CM_HEADER + MAX_PRIVATE_DATA + 2 * (1 + 16 + 4);
    /** The largest frame length a peer may announce. */
    public static final int MAX_FRAME = 1 + 4 + PACKET_HEADER + LARGEST_MESSAGE;
    private static final CmMessage.Type[] CM_TYPES = CmMessage.Type.values();

    public static LinkFrame close(LinkConnection connection) {
        return new LinkFrame(connection, null, null);
    }

    /** The payload that follows the header, or null. */
    public ByteBuffer payload() {
        return packet == null ? null : packet.data();
    }

    /** The bytes before the payload. */
    public int headerSize() {
        if (packet != null) {
            return PREFIX + PACKET_HEADER;
        }
        if (cm != null) {
            return PREFIX + CM_HEADER + cm.privateData().length + addressSize(cm.source())
                    + addressSize(cm.destination());
        }
        return PREFIX;
    }

    private static int addressSize(InetSocketAddress a) {
        return a == null ? 1 : 1 + a.getAddress().getAddress().length + 4;
    }

    /** Writes the frame's header, and its payload when {@code withPayload}, into {@code out}. */
    public void encode(ByteBuffer out, boolean withPayload) {
        ByteBuffer data = payload();
        int dataLength = data == null ? 0 : data.remaining();
        out.putInt(headerSize() - 4 + dataLength);
        if (packet != null) {
            Packet p = packet;
            out.put(PACKET).putInt(connection.number).put((byte) p.kind().ordinal()).putLong(p.psn())
                    .put((byte) p.opcode()).putInt(p.flags()).putInt(p.immData()).putLong(p.remoteAddress())
                    .putInt(p.rkey()).putInt(p.length()).putLong(p.compareAdd()).putLong(p.swap()).putLong(p.status())
                    .put((byte) p.port()).putInt(data == null ? -1 : dataLength);
            if (data != null && withPayload) {
                out.put(out.position(), data, data.position(), dataLength);
                out.position(out.position() + dataLength);
            }
        } else if (cm != null) {
            out.put(CM).putInt(connection.number).put((byte) cm.type().ordinal()).putInt(cm.qpn()).putLong(cm.psn())
                    .put(cm.gid()).putInt(cm.port()).putInt(cm.status()).put((byte) cm.responderResources())
                    .put((byte) cm.initiatorDepth()).put((byte) cm.retryCount()).put((byte) cm.rnrRetryCount())
                    .putShort((short) cm.privateData().length)
                    .put(cm.privateData());
            encode(out, cm.source());
            encode(out, cm.destination());
        } else {
            out.put(CLOSE).putInt(connection.number);
        }
    }

    private static void encode(ByteBuffer out, InetSocketAddress a) {
        if (a == null) {
            out.put((byte) 0);
            return;
        }
        byte[] ip = a.getAddress().getAddress();
        out.put((byte) ip.length).put(ip).putInt(a.getPort());
    }

    /** Checks a frame length read from the wire (what follows the length itself). */
    public static void checkLength(int length) throws ProtocolException {
        if (length < 1 + 4 || length > MAX_FRAME) {
            throw new ProtocolException("a frame of " + length + " bytes");
        }
    }

    /**
     * The packet of a PACKET frame whose body runs from {@code at} to {@code end} of {@code in};
     * its payload is a view of {@code in}.
     */
    public static Packet decodePacket(ByteBuffer in, int at, int end) throws ProtocolException {
        if (end - at < PACKET_HEADER) {
            throw new ProtocolException("a packet frame shorter than its header");
        }
        // each field read where encode() put it, not through a view of the frame: a packet makes
        // one view, its payload's (an ACK none)
        ByteBuffer b = in.order() == ByteOrder.BIG_ENDIAN ? in : in.duplicate();
        int kind = b.get(at + KIND);
        if (kind < 0 || kind >= Packet.KINDS.length) {
            throw new ProtocolException("packet kind " + kind);
        }
        int opcode = b.get(at + OPCODE);
        if (opcode < 0 || opcode >= Packet.OPCODES.length || Packet.OPCODES[opcode].isLocal()) {
            throw new ProtocolException("opcode " + opcode);
        }
        int payload = at + PACKET_HEADER;
        int n = b.getInt(at + DATA_LENGTH);
        if (n == -1 ? end > payload : n != end - payload) {
            throw new ProtocolException("a payload of " + n + " bytes in a frame of " + (end - at));
        }
        // a view of the link's buffer: the payload goes from the socket to its MR in one copy
        ByteBuffer data = n < 0 ? null : b.slice(payload, n);
        return new Packet(Packet.KINDS[kind], b.getLong(at + PSN), opcode, b.getInt(at + FLAGS),
                b.getInt(at + IMMEDIATE), b.getLong(at + REMOTE_ADDRESS), b.getInt(at + RKEY), b.getInt(at + LENGTH),
                b.getLong(at + COMPARE_ADD), b.getLong(at + SWAP), b.getLong(at + STATUS), b.get(at + PORT), data);
    }

    public static CmMessage decodeCm(ByteBuffer in, int at, int end) throws ProtocolException {
        if (end - at < CM_HEADER + 2 || end - at > MAX_CM) {
            throw new ProtocolException("a CM frame of " + (end - at) + " bytes");
        }
        ByteBuffer b = in.duplicate().limit(end).position(at);
        int type = b.get();
        if (type < 0 || type >= CM_TYPES.length) {
            throw new ProtocolException("CM message type " + type);
        }
        int qpn = b.getInt();
        long psn = b.getLong();
        byte[] gid = new byte[16];
        b.get(gid);
        int port = b.getInt();
        int status = b.getInt();
        // each is an 8-bit field of the IB CM's REQ and REP (the retry counts 3 bits of it)
        int responderResources = Byte.toUnsignedInt(b.get());
        int initiatorDepth = Byte.toUnsignedInt(b.get());
        int retryCount = Byte.toUnsignedInt(b.get());
        int rnrRetryCount = Byte.toUnsignedInt(b.get());
        int n = Short.toUnsignedInt(b.getShort());
        if (n > MAX_PRIVATE_DATA || n > b.remaining()) {
            throw new ProtocolException(n + " bytes of private data");
        }
        byte[] privateData = new byte[n];
        b.get(privateData);
        InetSocketAddress source = decodeAddress(b);
        InetSocketAddress destination = decodeAddress(b);
        if (b.hasRemaining()) {
            throw new ProtocolException("a CM frame longer than its message");
        }
        return new CmMessage(CM_TYPES[type], qpn, psn, gid, port, status, responderResources, initiatorDepth,
                retryCount, rnrRetryCount, privateData, source, destination);
    }

    private static InetSocketAddress decodeAddress(ByteBuffer b) throws ProtocolException {
        if (!b.hasRemaining()) {
            throw new ProtocolException("a CM frame cut short");
        }
        int n = b.get();
        if (n == 0) {
            return null;
        }
        if ((n != 4 && n != 16) || b.remaining() < n + 4) {
            throw new ProtocolException("an address of " + n + " bytes");
        }
        byte[] ip = new byte[n];
        b.get(ip);
        int port = b.getInt();
        if (port < 0 || port > 0xFFFF) {
            throw new ProtocolException("port " + port);
        }
        try {
            return new InetSocketAddress(InetAddress.getByAddress(ip), port);
        } catch (UnknownHostException e) {
            throw new ProtocolException("an address of " + n + " bytes");
        }
    }
}
