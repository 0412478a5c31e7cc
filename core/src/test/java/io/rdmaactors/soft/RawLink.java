package io.rdmaactors.soft;

import io.rdmaactors.cm.CmEvent;
import io.rdmaactors.soft.link.LinkHandshake;
import io.rdmaactors.verbs.CmId;
import io.rdmaactors.verbs.EventChannel;
import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.PortSpace;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.SocketException;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What the soft fabric's tests of links share: a peer process's side of a link played by hand,
 * the steps before a connect, and the waits and checks on what a fabric holds.
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
        LinkHandshake.connect(channel, secret, null);
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

    /**
     * A CM id of {@code fabric} with its address and route to 127.0.0.1:{@code port} resolved,
     * its events on {@code events}.
     */
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

    /** Waits, up to {@code within}, until {@code condition} holds; fails saying {@code what} otherwise. */
    static void eventually(String what, Duration within, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, what);
            Thread.sleep(5);
        }
    }

    /** The live threads of a fabric opened without a thread prefix, by name. */
    static List<String> threadsOf(Fabric fabric) {
        return liveThreadsOf(fabric).stream().map(Thread::getName).sorted().collect(Collectors.toList());
    }

    /** The live threads of a fabric opened without a thread prefix. */
    static List<Thread> liveThreadsOf(Fabric fabric) {
        String prefix = "rdma-" + ((SoftFabric) fabric).id + "-";
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive)
                .filter(t -> t.getName().startsWith(prefix)).collect(Collectors.toList());
    }

    /** The listener's side closed the socket: end of stream, or a reset. */
    static void assertEndedByTheServer(InputStream in, String what) throws IOException {
        try {
            assertEquals(-1, in.read(), what);
        } catch (SocketException reset) {
            assertNotNull(reset.getMessage(), what); // a reset ends it too
        }
    }
}
