package io.rdmaactors.actors;

import static io.rdmaactors.actors.Connections.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.rdmaactors.testkit.RdmaTestKit;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import org.apache.pekko.actor.DeadLetter;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.eventstream.EventStream;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * A service that uses the library as intended hears from it only through its messages: a normal
 * connection's life and a refused connect leave no dead letters and log nothing, not even at
 * DEBUG (which is what a user without a logging configuration sees).
 */
class QuietByDefaultTest {

    private RdmaTestKit kit;
    private final ListAppender<ILoggingEvent> logged = new ListAppender<>();
    private final Logger library = (Logger) LoggerFactory.getLogger("io.rdmaactors");
    private Level levelBefore;

    @BeforeEach
    void start() {
        levelBefore = library.getLevel();
        library.setLevel(Level.DEBUG);
        logged.start();
        library.addAppender(logged);
        kit = RdmaTestKit.create();
    }

    @AfterEach
    void stop() {
        kit.close();
        library.detachAppender(logged);
        library.setLevel(levelBefore);
    }

    @Test
    void aConnectionsLifeAndARefusedConnectLogNothingAndLeaveNoDeadLetters() throws Exception {
        TestProbe<DeadLetter> deadLetters = kit.probe();
        kit.testKit().system().eventStream().tell(new EventStream.Subscribe<>(DeadLetter.class, deadLetters.getRef()));

        RdmaTestKit.Listener listener = kit.listen(4);
        RdmaTestKit.Pair pair = kit.connect(listener);
        pair.client().tell(RdmaProtocol.Send.of(ByteString.fromString("hello"), "sent"));
        assertInstanceOf(RdmaProtocol.Received.class, pair.serverEvents().receiveMessage(WAIT));
        assertInstanceOf(RdmaProtocol.Acked.class, pair.clientEvents().receiveMessage(WAIT));
        kit.close(pair);
        kit.unbind(listener);

        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        TestProbe<RdmaProtocol.ConnectionEvent> refused = kit.probe();
        kit.manager().tell(RdmaProtocol.Connect.to(kit.address(port), refused.getRef()));
        refused.expectMessageClass(RdmaProtocol.ConnectFailed.class, WAIT);
        kit.awaitNoLeaks(WAIT);

        deadLetters.expectNoMessage(Duration.ofMillis(300));
        List<String> lines = logged.list.stream().map(e -> e.getLevel() + " " + e.getLoggerName() + ": "
                + e.getFormattedMessage()).toList();
        assertEquals(List.of(), lines, "the library logged in a normal flow");
    }
}
