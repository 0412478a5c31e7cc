package io.rdmaactors.soft;

import io.rdmaactors.cm.CmEvent;
import io.rdmaactors.soft.link.LinkFrame;
import io.rdmaactors.soft.link.LinkHandshake;
import io.rdmaactors.verbs.CmId;
import io.rdmaactors.verbs.ConnectionParameters;
import io.rdmaactors.verbs.EventChannel;
import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.PortSpace;
import io.rdmaactors.verbs.ProtectionDomain;
import io.rdmaactors.verbs.QpInitAttributes;
import io.rdmaactors.verbs.ResourceKind;
import io.rdmaactors.verbs.VerbsException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Who may use a listener from another process: only a peer that proves it knows the user's
 * cookie, within the handshake timeout, within the listener's caps on links; anything else is
 * refused before a frame is read, and the listener serves the next legitimate peer.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LinkSecurityTest {

    private static final Duration STEP = Duration.ofSeconds(10);

    @TempDir
    Path dir;
    private final List<Fabric> fabrics = new ArrayList<>();

    @AfterEach
    void close() {
        fabrics.forEach(Fabric::close);
    }

    /** A fabric with its own cookie file in the test's directory, and any other options. */
    private Fabric fabric(String cookie, String... options) {
        Map<String, String> all = new HashMap<>();
        all.put("cookie", dir.resolve(cookie).toString());
        all.put("transport", "tcp");
        for (int i = 0; i < options.length; i += 2) {
            all.put(options[i], options[i + 1]);
        }
        Fabric f = Fabric.open("soft", all);
        fabrics.add(f);
        return f;
    }

    private static final class Listener {
        final Fabric fabric;
        final EventChannel events;
        final CmId id;

        Listener(Fabric fabric) {
            this.fabric = fabric;
            this.events = fabric.createEventChannel();
            this.id = fabric.createCmId(events, PortSpace.TCP);
            id.bind(new InetSocketAddress("127.0.0.1", 0));
            id.listen(16);
        }

        int port() {
            return id.localAddress().getPort();
        }

        /** Accepts the next connection request, which must come. */
        void acceptNext() throws Exception {
            CmEvent.ConnectRequest request = assertInstanceOf(CmEvent.ConnectRequest.class, events.await(STEP));
            CmId agent = events.cmId(request.id());
            ProtectionDomain pd = fabric.devices().get(0).allocateProtectionDomain();
            agent.createQueuePair(pd, QpInitAttributes.rc(fabric.devices().get(0).createCompletionQueue(16, null), 4, 4));
            agent.accept(ConnectionParameters.of(null));
            assertInstanceOf(CmEvent.Established.class, events.await(STEP));
        }
    }

    /** Starts a connect from {@code client} to {@code port}; its events come on the returned channel. */
    private static EventChannel connect(Fabric client, int port) throws Exception {
        EventChannel events = client.createEventChannel();
        CmId id = RawLink.resolvedTo(client, events, port);
        ProtectionDomain pd = client.devices().get(0).allocateProtectionDomain();
        id.createQueuePair(pd, QpInitAttributes.rc(client.devices().get(0).createCompletionQueue(16, null), 4, 4));
        id.connect(ConnectionParameters.of(null));
        return events;
    }

    private static long links(Fabric f) {
        return f.ledger().live(ResourceKind.LINK);
    }

    @Test
    void aPeerWithoutTheCookieReachesNoListenerAndTheListenerServesOn() throws Exception {
        Listener server = new Listener(fabric("server-cookie", "links.handshake.timeout.ms", "300"));

        CmEvent refused = connect(fabric("another-cookie"), server.port()).await(STEP);
        assertEquals(-VerbsException.EACCES, assertInstanceOf(CmEvent.Unreachable.class, refused).status(),
                "a listener with another cookie is refused by the connecting side");

        try (SocketChannel raw = RawLink.connect(server.port(), 0)) {
            raw.socket().getOutputStream().write(ByteBuffer.allocate(9).putInt(5).put(LinkFrame.CLOSE).putInt(1)
                    .array());
            RawLink.assertEndedByTheServer(raw.socket().getInputStream(), "a frame before the handshake");
        }
        try (SocketChannel raw = RawLink.connect(server.port(), 0)) {
            RawLink.assertEndedByTheServer(raw.socket().getInputStream(),
                    "a peer that never says hello, at the timeout");
        }
        try (SocketChannel raw = RawLink.connect(server.port(), 0)) {
            byte[] guess = "0123456789abcdef0123456789abcdef".getBytes();
            assertThrows(LinkHandshake.AuthenticationException.class, () -> LinkHandshake.connect(raw, guess, null));
        }
        try (SocketChannel raw = RawLink.connect(server.port(), 0)) {
            // a peer that skips checking the listener's proof still has to prove its own
            ByteBuffer hello = ByteBuffer.allocate(41).putInt(37).put(LinkHandshake.HELLO).putInt(LinkHandshake.MAGIC)
                    .put(new byte[32]).flip();
            raw.write(hello);
            InputStream in = raw.socket().getInputStream();
            assertEquals(4 + 65, in.readNBytes(4 + 65).length, "the challenge");
            raw.write(ByteBuffer.allocate(65).putInt(61).put(LinkHandshake.PROOF).put(new byte[60]).flip());
            RawLink.assertEndedByTheServer(in, "a wrong proof");
        }
        assertNull(server.events.await(Duration.ofMillis(100)), "nobody without the cookie reached the listener");
        RawLink.eventually("every refused link closed", STEP, () -> links(server.fabric) == 0);

        Fabric friend = fabric("server-cookie");
        EventChannel friendEvents = connect(friend, server.port());
        server.acceptNext();
        assertInstanceOf(CmEvent.Established.class, friendEvents.await(STEP));
        assertEquals(1, links(server.fabric), "the ledger counts the link");
        assertEquals(1, links(friend), "on both sides");
    }

    @Test
    void linksBeyondTheCapsAreRefusedAtOnce() throws Exception {
        Listener server = new Listener(fabric("cookie", "links.pending", "2", "links.max", "3",
                "links.handshake.timeout.ms", "600000"));
        SocketChannel first = RawLink.connect(server.port(), 0);
        SocketChannel second = RawLink.connect(server.port(), 0);
        RawLink.eventually("two links wait in their handshake", STEP, () -> links(server.fabric) == 2);
        try (SocketChannel third = RawLink.connect(server.port(), 0)) {
            RawLink.assertEndedByTheServer(third.socket().getInputStream(),
                    "a third link while two wait in their handshake");
        }
        first.close();
        second.close();
        RawLink.eventually("the waiting links closed", STEP, () -> links(server.fabric) == 0);

        for (int i = 0; i < 3; i++) {
            EventChannel events = connect(fabric("cookie"), server.port());
            server.acceptNext();
            assertInstanceOf(CmEvent.Established.class, events.await(STEP));
        }
        CmEvent beyond = connect(fabric("cookie"), server.port()).await(STEP);
        assertEquals(-VerbsException.ECONNRESET, assertInstanceOf(CmEvent.Unreachable.class, beyond).status(),
                "a fourth process's link is beyond links.max");
        assertEquals(3, links(server.fabric));
    }

    @Test
    void theCookieIsMadePrivateAndOneOthersCanReadIsRefused() throws Exception {
        Listener server = new Listener(fabric("made"));
        assertNotNull(server);
        Path made = dir.resolve("made");
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(made)));
        assertTrue(Files.readString(made).strip().matches("[0-9a-f]{64}"), "32 random bytes");

        Path shared = dir.resolve("shared");
        Files.writeString(shared, "0123456789abcdef0123456789abcdef\n");
        Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rw-r--r--"));
        Fabric careless = fabric("shared");
        CmId id = careless.createCmId(careless.createEventChannel(), PortSpace.TCP);
        id.bind(new InetSocketAddress("127.0.0.1", 0));
        VerbsException e = assertThrows(VerbsException.class, () -> id.listen(1));
        assertEquals(VerbsException.EACCES, e.errno());
        assertTrue(e.getMessage().contains("chmod 600"), e.getMessage());
    }
}
