package io.rdmaactors.soft.link;

import io.rdmaactors.soft.wire.Packet;
import java.net.ProtocolException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** A packet frame decodes to the packet encoded, field by field, wherever it lies in the buffer read. */
class LinkFrameTest {

    private static final int TAG_AND_NUMBER = 1 + 4;

    private final LinkConnection connection = new LinkConnection(null, 7, null);

    @Test
    void everyFieldOfAPacketAndItsPayloadSurviveTheWire() throws Exception {
        Packet sent = new Packet(Packet.Kind.READ_RESPONSE, 0x0123_4567_89ABL, 3, Packet.MORE | Packet.WITH_IMM, -7,
                0x7FFF_1234_5678L, 0xCAFE_BABE, 4096, Long.MIN_VALUE + 3, -2, 12_345_678_901L, 2,
                ByteBuffer.wrap(new byte[] {1, 2, 3, 4, 5}));
        for (int at : new int[] {0, 13}) {
            ByteBuffer wire = encoded(sent, at, ByteBuffer.allocateDirect(512));
            assertEquals(sent, decoded(wire, at), "a frame at " + at);
        }
    }

    @Test
    void anAckCarriesNoPayload() throws Exception {
        ByteBuffer wire = encoded(Packet.ack(42, 17), 0, ByteBuffer.allocateDirect(512));
        Packet ack = decoded(wire, 0);
        assertNull(ack.data());
        assertEquals(42, ack.psn());
        assertEquals(17, ack.credits());
    }

    @Test
    void aBufferInLittleEndianOrderIsReadAsTheWireWasWritten() throws Exception {
        Packet sent = Packet.errorNak(99, 12);
        ByteBuffer wire = encoded(sent, 0, ByteBuffer.allocate(512));
        wire.order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(sent, decoded(wire, 0));
    }

    @Test
    void aPayloadLengthThatDisagreesWithTheFrameIsRefused() {
        ByteBuffer wire = encoded(Packet.readResponse(1, ByteBuffer.wrap(new byte[8])), 0,
                ByteBuffer.allocateDirect(512));
        int body = 4 + TAG_AND_NUMBER;
        assertThrows(ProtocolException.class, () -> LinkFrame.decodePacket(wire, body, wire.position() - 1));
        ByteBuffer ack = encoded(Packet.ack(1, 1), 0, ByteBuffer.allocateDirect(512));
        assertThrows(ProtocolException.class, () -> LinkFrame.decodePacket(ack, body, ack.position() + 3),
                "an ACK followed by bytes");
    }

    @Test
    void anUnknownKindIsRefused() {
        ByteBuffer wire = encoded(Packet.ack(1, 1), 0, ByteBuffer.allocateDirect(512));
        int body = 4 + TAG_AND_NUMBER;
        wire.put(body, (byte) Packet.KINDS.length);
        assertThrows(ProtocolException.class, () -> LinkFrame.decodePacket(wire, body, wire.position()));
    }

    /** The frame written from {@code at}: a length, the tag and connection number, the packet. */
    private ByteBuffer encoded(Packet p, int at, ByteBuffer into) {
        into.position(at);
        new LinkFrame(connection, p, null).encode(into, true);
        return into;
    }

    /** Decodes the frame encoded at {@code at}, as the reader does after the length and the tag. */
    private static Packet decoded(ByteBuffer wire, int at) throws ProtocolException {
        int end = wire.position();
        wire.position(0);
        return LinkFrame.decodePacket(wire, at + 4 + TAG_AND_NUMBER, end);
    }
}
