package io.rdmaactors.actors.streams;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.typesafe.config.ConfigFactory;
import io.rdmaactors.actors.RdmaProtocol;
import io.rdmaactors.actors.RdmaSettings;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The stage's side of the flow control, against a probe for the connection: at most a window of
 * Sends unacknowledged, and one Acked for many of them.
 */
class ConnectionStageTest {

    private static final int WINDOW = 40;
    private static final InetSocketAddress PEER = new InetSocketAddress("127.0.0.1", 7174);

    private ActorTestKit testKit;
    private TestProbe<RdmaProtocol.ConnectionCommand> connection;
    private ActorRef<RdmaProtocol.ConnectionEvent> handler;
    private int bufferSize;

    @BeforeEach
    void start() {
        testKit = ActorTestKit.create(ConfigFactory.load());
        RdmaSettings settings = RdmaSettings.from(ConfigFactory.load())
                .with(RdmaProtocol.ConnectionOptions.none().withSendQueueDepth(WINDOW));
        bufferSize = settings.bufferSize();
        TestProbe<RdmaProtocol.ConnectionCommand> requested = testKit.createTestProbe();
        connection = testKit.createTestProbe();
        // more than the window holds, a buffer each: each element is one Send
        List<ByteString> elements = new ArrayList<>();
        for (int i = 0; i < 3 * WINDOW; i++) {
            elements.add(ByteString.fromArrayUnsafe(new byte[bufferSize]));
        }
        Source.from(elements).via(Flow.fromGraph(ConnectionStage.accepting(requested.ref(), PEER, settings, true)))
                .runWith(Sink.ignore(), testKit.system());
        handler = requested.expectMessageClass(RdmaProtocol.Accept.class).handler();
        handler.tell(new RdmaProtocol.Connected(connection.ref(), PEER, PEER, new byte[0]));
    }

    @AfterEach
    void stop() {
        testKit.shutdownTestKit();
    }

    /** The acks of the next {@code count} Sends, in order (null: that Send asked for none). */
    private List<Object> sends(int count) {
        List<Object> acks = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            RdmaProtocol.Send send = connection.expectMessageClass(RdmaProtocol.Send.class);
            assertEquals(bufferSize, send.size());
            acks.add(send.ack());
        }
        connection.expectNoMessage(Duration.ofMillis(200)); // the window is full
        return acks;
    }

    /** An ack list of {@code count} Sends where those at {@code asking} carry how many Sends their Acked stands for. */
    private static List<Object> expected(int count, int... asking) {
        List<Object> acks = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            acks.add(null);
        }
        int last = 0;
        for (int at : asking) {
            acks.set(at - 1, at - last);
            last = at;
        }
        return acks;
    }

    @Test
    void everySixteenthSendAndTheOneThatFillsTheWindowAskForAnAckedThatStandsForThoseBefore() {
        assertEquals(expected(WINDOW, 16, 32, 40), sends(WINDOW));
        handler.tell(new RdmaProtocol.Acked(16));
        assertEquals(expected(16, 16), sends(16), "16 acknowledged: 16 more, the last filling the window");
        handler.tell(new RdmaProtocol.Acked(16));
        handler.tell(new RdmaProtocol.Acked(8));
        assertEquals(expected(24, 16, 24), sends(24));
    }
}
