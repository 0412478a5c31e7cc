package io.rdmaactors.soft;

import io.rdmaactors.verbs.Fabric;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;

/** A socket that plays a peer process's side of a link by hand, for tests of what a listener takes. */
final class RawLink {

    static final int TIMEOUT_MS = 10_000;

    private RawLink() {
    }

    /**
     * A socket to {@code port} that passed the handshake with {@code secret}: from here on it
     * speaks frames as a peer process would. {@code receiveBuffer} 0 keeps the default.
     */
    static SocketChannel open(int port, byte[] secret, int receiveBuffer) throws IOException {
        SocketChannel channel = connect(port, receiveBuffer);
        LinkHandshake.connect(channel, secret);
        return channel;
    }

    /** A blocking socket to {@code port}, reads timing out, that has said nothing yet. */
    static SocketChannel connect(int port, int receiveBuffer) throws IOException {
        SocketChannel channel = SocketChannel.open();
        if (receiveBuffer > 0) {
            channel.socket().setReceiveBufferSize(receiveBuffer);
        }
        channel.connect(new InetSocketAddress("127.0.0.1", port));
        channel.socket().setSoTimeout(TIMEOUT_MS);
        return channel;
    }

    /** The cookie a fabric's links prove they know (once it listens or connects between processes). */
    static byte[] secret(Fabric fabric) {
        return ((SoftFabric) fabric).links.secret();
    }
}
