package io.rdmaactors.actors;

import io.rdmaactors.actors.streams.RdmaStreams;
import io.rdmaactors.testkit.RdmaTestKit;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.javadsl.Keep;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.stream.scaladsl.Framing;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import static io.rdmaactors.actors.Connections.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RdmaStreamsTest {

    private RdmaTestKit kit;
    private ActorSystem<Void> system;
    private RdmaStreams streams;

    @BeforeEach
    void start() {
        kit = RdmaTestKit.create("rdma-actors.send-queue-depth = 8\nrdma-actors.receive-queue-depth = 8\n"
                + "rdma-actors.max-message-size = 1 MiB");
        system = kit.testKit().system();
        streams = RdmaStreams.get(system);
    }

    @AfterEach
    void stop() {
        kit.close();
    }

    /** Messages of every size from 1 byte to the buffer size, each with its number in its first bytes. */
    private static List<ByteString> messages(int count) {
        List<ByteString> messages = new ArrayList<>();
        for (int n = 0; n < count; n++) {
            byte[] data = new byte[1 + (n * 37) % 4096];
            for (int i = 0; i < data.length; i++) {
                data[i] = (byte) (n + i);
            }
            messages.add(ByteString.fromArrayUnsafe(data));
        }
        return messages;
    }

    /** Whole streams under emulation (rdma-core's rxe in a TCG guest) take far longer than a step. */
    private static <T> T await(CompletionStage<T> stage) throws Exception {
        return stage.toCompletableFuture().get(Connections.STREAM_WAIT.toSeconds(), TimeUnit.SECONDS);
    }

    private RdmaStreams.ServerBinding echoServer(Flow<ByteString, ByteString, ?> handler) throws Exception {
        return await(streams.bind(kit.address(0))
                .to(Sink.foreach(connection -> connection.handleWith(handler, system)))
                .run(system));
    }

    @Test
    void echoKeepsEveryMessageWholeAndInOrderAndHalfCloseEndsBothSides() throws Exception {
        RdmaStreams.ServerBinding binding = echoServer(Flow.create());
        List<ByteString> sent = messages(1000);
        var result = Source.from(sent)
                .viaMat(streams.outgoingConnection(binding.localAddress()), Keep.right())
                .toMat(Sink.seq(), Keep.both())
                .run(system);
        RdmaStreams.OutgoingConnection connection = await(result.first());
        assertEquals(binding.localAddress(), connection.remoteAddress());
        // the client's upstream ended: the server saw the end, completed its echo, and that ended the client
        assertEquals(sent, await(result.second()));
        await(binding.unbind());
        kit.awaitNoLeaks(WAIT);
    }

    /** The listener sees it from the start: the IB CM pads a request's private data to its 56 bytes. */
    @Test
    void theListenerSeesTheRequestsPrivateData() throws Exception {
        TestProbe<ByteString> seen = kit.probe();
        RdmaStreams.ServerBinding binding = await(streams.bind(kit.address(0))
                .to(Sink.foreach(connection -> {
                    seen.getRef().tell(connection.privateData());
                    connection.handleWith(Flow.create(), system);
                }))
                .run(system));
        ByteString hello = ByteString.fromString("channel: orders");
        List<ByteString> echoed = await(Source.single(ByteString.fromString("one"))
                .via(streams.outgoingConnection(binding.localAddress(),
                        RdmaStreams.Options.defaults().withPrivateData(hello)))
                .runWith(Sink.seq(), system));
        assertEquals(List.of(ByteString.fromString("one")), echoed);
        ByteString privateData = seen.receiveMessage(WAIT);
        assertEquals(hello, privateData.take(hello.size()), privateData.utf8String());
        assertThrows(IllegalArgumentException.class, () -> RdmaStreams.Options.defaults()
                .withPrivateData(ByteString.fromArray(new byte[RdmaProtocol.Connect.MAX_PRIVATE_DATA + 1])));
        await(binding.unbind());
        kit.awaitNoLeaks(WAIT);
    }

    /**
     * A window deeper than the Sends one Acked stands for, and not a multiple of it: every element
     * comes back, in order, through a real connection (what the stage keeps in flight is
     * ConnectionStageTest's).
     */
    @Test
    void oneAckedStandsForTheSendsBeforeIt() throws Exception {
        RdmaStreams.ServerBinding binding = echoServer(Flow.create());
        RdmaStreams.Options deep = RdmaStreams.Options.defaults()
                .withConnectionOptions(RdmaProtocol.ConnectionOptions.none().withSendQueueDepth(40));
        List<ByteString> sent = messages(3000);
        assertEquals(sent, await(Source.from(sent)
                .via(streams.outgoingConnection(binding.localAddress(), deep))
                .runWith(Sink.seq(), system)));
        await(binding.unbind());
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void aSlowReaderHoldsTheWriterBackWithoutLosingAnything() throws Exception {
        RdmaStreams.ServerBinding binding = echoServer(Flow.<ByteString>create()
                .throttle(200, Duration.ofMillis(100)));
        List<ByteString> sent = messages(600);
        List<ByteString> echoed = await(Source.from(sent)
                .via(streams.outgoingConnection(binding.localAddress()))
                .runWith(Sink.seq(), system));
        assertEquals(sent, echoed);
        await(binding.unbind());
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void downstreamCancelClosesTheConnection() throws Exception {
        RdmaStreams.ServerBinding binding = echoServer(Flow.create());
        // the client never completes its upstream; taking 10 echoes cancels, which closes
        List<ByteString> echoed = await(Source.repeat(ByteString.fromString("ping"))
                .via(streams.outgoingConnection(binding.localAddress()))
                .take(10)
                .runWith(Sink.seq(), system));
        assertEquals(10, echoed.size());
        await(binding.unbind());
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void anIdleTimeoutFailsAStreamNothingPassesOn() throws Exception {
        RdmaStreams.ServerBinding binding = echoServer(Flow.create());
        var result = Source.<ByteString>maybe()
                .viaMat(streams.outgoingConnection(binding.localAddress(),
                        RdmaStreams.Options.defaults().withIdleTimeout(Duration.ofMillis(300))), Keep.right())
                .toMat(Sink.ignore(), Keep.both())
                .run(system);
        try {
            await(result.first());
        } catch (ExecutionException e) {
            // an emulated guest (jna under qemu) may take longer to connect than the timeout: the
            // timeout then fails the connection as well, as Pekko's Tcp counts the connect in it
            assertInstanceOf(java.util.concurrent.TimeoutException.class, e.getCause());
        }
        ExecutionException idle = assertThrows(ExecutionException.class, () -> await(result.second()));
        assertInstanceOf(java.util.concurrent.TimeoutException.class, idle.getCause());
        await(binding.unbind());
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void withoutHalfCloseTheServersEndClosesTheConnection() throws Exception {
        RdmaStreams.ServerBinding binding = await(streams.bind(kit.address(0), 8,
                        RdmaStreams.Options.defaults().withHalfClose(false))
                .to(Sink.foreach(connection -> connection.handleWith(Flow.fromSinkAndSource(Sink.ignore(),
                        Source.single(ByteString.fromString("bye"))), system)))
                .run(system));
        // the client never ends its upstream: only the server's close ends the connection (with
        // half-close it would stay open, and its resources live)
        List<ByteString> heard = await(Source.<ByteString>maybe()
                .via(streams.outgoingConnection(binding.localAddress()))
                .runWith(Sink.seq(), system));
        assertEquals(List.of(ByteString.fromString("bye")), heard);
        await(binding.unbind());
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void aConnectTimeoutAndALocalAddressAreTheConnects() throws Exception {
        TestProbe<RdmaProtocol.ListenerEvent> silent = kit.probe(); // never answers a request
        kit.manager().tell(RdmaProtocol.Listen.on(kit.address(0), silent.getRef()));
        RdmaProtocol.Listening bound = silent.expectMessageClass(RdmaProtocol.Listening.class, WAIT);
        InetSocketAddress listening = bound.localAddress();
        var result = Source.<ByteString>maybe()
                .viaMat(streams.outgoingConnection(listening, RdmaStreams.Options.defaults()
                        .withConnectTimeout(Duration.ofMillis(300)).withLocalAddress(kit.address(0))), Keep.right())
                .toMat(Sink.ignore(), Keep.both())
                .run(system);
        ExecutionException timedOut = assertThrows(ExecutionException.class, () -> await(result.first()));
        assertTrue(timedOut.getCause().getMessage().contains("TimedOut[after=PT0.3S]"), timedOut.getCause().getMessage());
        silent.expectMessageClass(RdmaProtocol.ConnectionRequested.class, WAIT).connection()
                .tell(new RdmaProtocol.Reject(null));
        kit.unbind(new RdmaTestKit.Listener(silent, bound));
        kit.awaitNoLeaks(WAIT);
        RdmaStreams.ServerBinding binding = echoServer(Flow.create());
        RdmaStreams.OutgoingConnection from = await(Source.single(ByteString.fromString("hi"))
                .viaMat(streams.outgoingConnection(binding.localAddress(), RdmaStreams.Options.defaults()
                        .withLocalAddress(kit.address(0))), Keep.right())
                .to(Sink.ignore()).run(system));
        assertEquals(kit.address(0).getAddress(), from.localAddress().getAddress());
        await(binding.unbind());
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void connectingToNobodyFailsTheStreamAndItsConnection() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        var result = Source.single(ByteString.fromString("hello"))
                .viaMat(streams.outgoingConnection(kit.address(port)), Keep.right())
                .toMat(Sink.ignore(), Keep.both())
                .run(system);
        ExecutionException connect = assertThrows(ExecutionException.class, () -> await(result.first()));
        assertInstanceOf(RdmaStreams.ConnectionFailed.class, connect.getCause());
        ExecutionException stream = assertThrows(ExecutionException.class, () -> await(result.second()));
        assertInstanceOf(RdmaStreams.ConnectionFailed.class, stream.getCause());
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void elementsLargerThanABufferArriveWholeAndOnesBeyondTheMaximumFailTheStream() throws Exception {
        RdmaStreams.ServerBinding binding = echoServer(Flow.create());
        List<ByteString> large = List.of(ByteString.fromArrayUnsafe(new byte[300_000]), ByteString.fromString("x"),
                ByteString.fromArrayUnsafe(new byte[1 << 20]));
        assertEquals(large, await(Source.from(large)
                .via(streams.outgoingConnection(binding.localAddress()))
                .runWith(Sink.seq(), system)));
        ExecutionException failed = assertThrows(ExecutionException.class, () -> await(
                Source.single(ByteString.fromArrayUnsafe(new byte[(1 << 20) + 1]))
                        .via(streams.outgoingConnection(binding.localAddress()))
                        .runWith(Sink.ignore(), system)));
        assertInstanceOf(Framing.FramingException.class, failed.getCause());
        await(binding.unbind());
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void aConnectionsOwnLargestElementWinsOverTheSystems() throws Exception {
        RdmaStreams.ServerBinding binding = echoServer(Flow.create());
        RdmaStreams.Options small = RdmaStreams.Options.defaults()
                .withConnectionOptions(RdmaProtocol.ConnectionOptions.none().withMaxMessageSize(1000));
        List<ByteString> fits = List.of(ByteString.fromArrayUnsafe(new byte[1000]), ByteString.fromString("x"));
        assertEquals(fits, await(Source.from(fits)
                .via(streams.outgoingConnection(binding.localAddress(), small))
                .runWith(Sink.seq(), system)));
        ExecutionException failed = assertThrows(ExecutionException.class, () -> await(
                Source.single(ByteString.fromArrayUnsafe(new byte[1001]))
                        .via(streams.outgoingConnection(binding.localAddress(), small))
                        .runWith(Sink.ignore(), system)));
        assertInstanceOf(Framing.FramingException.class, failed.getCause());
        await(binding.unbind());
        kit.awaitNoLeaks(WAIT);
    }

    @Test
    void bindingAnAddressInUseFailsTheBinding() throws Exception {
        RdmaStreams.ServerBinding first = echoServer(Flow.create());
        InetSocketAddress taken = first.localAddress();
        ExecutionException failed = assertThrows(ExecutionException.class,
                () -> await(streams.bind(taken).to(Sink.ignore()).run(system)));
        assertInstanceOf(RdmaStreams.ConnectionFailed.class, failed.getCause());
        await(first.unbind());
        kit.awaitNoLeaks(WAIT);
    }
}
