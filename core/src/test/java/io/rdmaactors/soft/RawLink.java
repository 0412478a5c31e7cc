package io.rdmaactors.soft;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.rdmaactors.cm.CmEvent;
import io.rdmaactors.verbs.CmId;
import io.rdmaactors.verbs.EventChannel;
import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.PortSpace;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.time.Duration;

/**
 * A peer process's side of a link played by hand, for tests of what a listener takes, and the
 * steps before a connect that those tests share.
 */
final class RawLink {

    static final int TIMEOUT_MS = 10_000;
    private static final Duration STEP = Duration.ofMillis(TIMEOUT_MS);

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

    /** A CM id of {@code fabric} with its address and route to 127.0.0.1:{@code port} resolved, its events on {@code events}. */
    static CmId resolvedTo(Fabric fabric, EventChannel events, int port) throws Exception {
        CmId id = fabric.createCmId(events, PortSpace.TCP);
        id.resolveAddress(null, new InetSocketAddress("127.0.0.1", port), STEP);
        assertInstanceOf(CmEvent.AddrResolved.class, events.await(STEP));
        id.resolveRoute(STEP);
        assertInstanceOf(CmEvent.RouteResolved.class, events.await(STEP));
        return id;
    }

    /** The cookie a fabric's links prove they know (once it listens or connects between processes). */
    static byte[] secret(Fabric fabric) {
        return ((SoftFabric) fabric).links.secret();
    }
}
