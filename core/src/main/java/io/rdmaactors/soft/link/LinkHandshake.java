package io.rdmaactors.soft.link;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.ProtocolException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The first frames of a link: both sides prove they know the fabric's cookie without sending it
 * (HMAC-SHA256 over fresh nonces of both, with a label per role so one side's proof is never the
 * other's). The connecting side says HELLO with its nonce, the accepting side answers CHALLENGE
 * with its nonce and its proof, the connecting side checks that and answers PROOF. Until the
 * accepting side has checked PROOF it reads nothing but these two fixed-size frames, so a peer
 * without the cookie can make it allocate nothing and reach no CM id or memory region. PROOF
 * carries the connecting side's offer of shared memory ({@link LinkSharedMemory}), or zeros; an
 * offer is answered with ANSWER, yes or no, before either side sends anything else.
 */
public final class LinkHandshake {

    public static final byte HELLO = 3;
    public static final byte CHALLENGE = 4;
    public static final byte PROOF = 5;
    public static final byte ANSWER = 6;
    /** "RAL2": rdma-actors link, version 2. */
    public static final int MAGIC = 0x52414C32;
    private static final int NONCE = 32;
    private static final int MAC = 32;
    private static final int HELLO_LENGTH = 1 + 4 + NONCE;
    private static final int CHALLENGE_LENGTH = 1 + NONCE + MAC;
    private static final int PROOF_LENGTH = 1 + MAC + LinkSharedMemory.Offer.BYTES;
    private static final int ANSWER_LENGTH = 2;
    private static final byte[] ACCEPTOR = "rdma-actors link acceptor".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] CONNECTOR = "rdma-actors link connector".getBytes(StandardCharsets.US_ASCII);
    private static final SecureRandom RANDOM = new SecureRandom();

    private final byte[] secret;
    /** The connector's nonce once HELLO came; the acceptor's own. */
    private byte[] theirs;
    private final byte[] mine = nonce();
    /** What the connector offered with its PROOF, or null. */
    private LinkSharedMemory.Offer offer;

    /** The accepting side's handshake, fed by the link's reads. */
    public LinkHandshake(byte[] secret) {
        this.secret = secret;
    }

    /**
     * Takes the handshake frames at the start of {@code in}, answering HELLO on {@code channel};
     * true once the peer proved it knows the cookie (what follows in {@code in} is ordinary
     * frames), false while more bytes are needed. Throws on anything else.
     */
    public boolean accept(ByteBuffer in, SocketChannel channel) throws IOException {
        boolean hello = theirs == null;
        int expected = hello ? HELLO_LENGTH : PROOF_LENGTH;
        if (in.remaining() < 4) {
            return false;
        }
        if (in.getInt(in.position()) != expected || (in.remaining() > 4 && in.get(in.position() + 4) != (hello ? HELLO : PROOF))) {
            throw new ProtocolException("not an rdma-actors link handshake");
        }
        if (in.remaining() < 4 + expected) {
            return false;
        }
        in.position(in.position() + 5);
        if (hello) {
            if (in.getInt() != MAGIC) {
                throw new ProtocolException("an rdma-actors link of another version");
            }
            theirs = new byte[NONCE];
            in.get(theirs);
            ByteBuffer challenge = ByteBuffer.allocate(4 + CHALLENGE_LENGTH).putInt(CHALLENGE_LENGTH).put(CHALLENGE)
                    .put(mine).put(mac(ACCEPTOR, theirs, mine)).flip();
            channel.write(challenge);
            if (challenge.hasRemaining()) {
                // a fresh socket's send buffer takes 69 bytes at once; a peer that sent HELLO and does not read is not one of ours
                throw new ProtocolException("the peer did not take the handshake's challenge");
            }
            return accept(in, channel);
        }
        byte[] proof = new byte[MAC];
        in.get(proof);
        if (!MessageDigest.isEqual(proof, mac(CONNECTOR, theirs, mine))) {
            throw new AuthenticationException("the peer does not know this fabric's cookie");
        }
        long pid = in.getLong();
        byte[] id = new byte[16];
        in.get(id);
        int ringBytes = in.getInt();
        offer = ringBytes == 0 ? null : new LinkSharedMemory.Offer(pid, id, ringBytes);
        return true;
    }

    /** Once the handshake is over: the shared memory the peer offered, or null; {@link #answer} it. */
    public LinkSharedMemory.Offer offer() {
        return offer;
    }

    /** The accepting side's answer to an offer: whether the link's data goes through the shared memory. */
    public static void answer(SocketChannel channel, boolean yes) throws IOException {
        ByteBuffer answer = ByteBuffer.allocate(4 + ANSWER_LENGTH).putInt(ANSWER_LENGTH).put(ANSWER)
                .put((byte) (yes ? 1 : 0)).flip();
        channel.write(answer);
        if (answer.hasRemaining()) {
            throw new ProtocolException("the peer did not take the handshake's answer");
        }
    }

    /**
     * The connecting side's handshake on a blocking channel whose socket has a read timeout:
     * returns once both sides proved they know the cookie, true when the peer took the shared
     * memory offered (null: none).
     */
    public static boolean connect(SocketChannel channel, byte[] secret, LinkSharedMemory.Offer offered)
            throws IOException {
        LinkHandshake h = new LinkHandshake(secret);
        channel.write(ByteBuffer.allocate(4 + HELLO_LENGTH).putInt(HELLO_LENGTH).put(HELLO).putInt(MAGIC).put(h.mine)
                .flip());
        // the socket adaptor's stream honours the socket's read timeout; the channel's read would not
        InputStream stream = channel.socket().getInputStream();
        DataInputStream in = new DataInputStream(stream);
        if (in.readInt() != CHALLENGE_LENGTH || in.readByte() != CHALLENGE) {
            throw new ProtocolException("the listener does not speak the rdma-actors link handshake");
        }
        h.theirs = new byte[NONCE];
        in.readFully(h.theirs);
        byte[] proof = new byte[MAC];
        in.readFully(proof);
        if (!MessageDigest.isEqual(proof, h.mac(ACCEPTOR, h.mine, h.theirs))) {
            throw new AuthenticationException("the listener does not know this fabric's cookie");
        }
        ByteBuffer proofFrame = ByteBuffer.allocate(4 + PROOF_LENGTH).putInt(PROOF_LENGTH).put(PROOF)
                .put(h.mac(CONNECTOR, h.mine, h.theirs));
        if (offered == null) {
            proofFrame.put(new byte[LinkSharedMemory.Offer.BYTES]);
        } else {
            proofFrame.putLong(offered.pid()).put(offered.id()).putInt(offered.ringBytes());
        }
        proofFrame.flip();
        while (proofFrame.hasRemaining()) {
            channel.write(proofFrame);
        }
        if (offered == null) {
            return false;
        }
        if (in.readInt() != ANSWER_LENGTH || in.readByte() != ANSWER) {
            throw new ProtocolException("the listener did not answer the offer of shared memory");
        }
        return in.readByte() == 1;
    }

    /** HMAC over the role's label, the connector's nonce, then the acceptor's. */
    private byte[] mac(byte[] label, byte[] connectorNonce, byte[] acceptorNonce) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            // an empty cookie (option off) still keys the MAC: HMAC pads any key to its block
            mac.init(new SecretKeySpec(secret.length == 0 ? new byte[1] : secret, "HmacSHA256"));
            mac.update(label);
            mac.update(connectorNonce);
            return mac.doFinal(acceptorNonce);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every Java runtime", e);
        }
    }

    private static byte[] nonce() {
        byte[] n = new byte[NONCE];
        RANDOM.nextBytes(n);
        return n;
    }

    /** A peer that does not know the cookie. */
    public static final class AuthenticationException extends ProtocolException {
        AuthenticationException(String message) {
            super(message);
        }
    }
}
