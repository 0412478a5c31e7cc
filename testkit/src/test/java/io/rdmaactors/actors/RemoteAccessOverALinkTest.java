package io.rdmaactors.actors;

import static io.rdmaactors.actors.Connections.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaactors.testkit.RdmaTestKit;
import io.rdmaactors.verbs.Access;
import io.rdmaactors.verbs.WcStatus;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.EnumSet;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A Read with a key the peer did not give, across a link as between two processes (on rdma-core,
 * through the device): it fails at
 * once, with a reason that names the remote access error, not a transport retry timeout.
 */
class RemoteAccessOverALinkTest {

    /** Far below the transport's retries (0.5 s times 7), which a lost NAK would cost. */
    private static final Duration AT_ONCE = Duration.ofSeconds(1);

    private RdmaTestKit kit;

    @BeforeEach
    void start() {
        kit = RdmaTestKit.create("rdma-actors.fabric-options.transport = tcp");
    }

    @AfterEach
    void stop() {
        kit.close();
    }

    @Test
    void aReadWithAWrongKeyFailsAtOnceNamingTheRemoteAccessError() {
        RdmaTestKit.Listener listener = kit.listen(8);
        RdmaTestKit.Pair pair = kit.connect(listener);
        TestProbe<RdmaProtocol.ExportReply> exported = kit.probe();
        pair.server().tell(new RdmaProtocol.Export(ByteBuffer.allocateDirect(64), EnumSet.of(Access.REMOTE_READ),
                exported.getRef()));
        RemoteRegion region = exported.expectMessageClass(RdmaProtocol.Exported.class, WAIT).region();
        RdmaProtocol.Read read = new RdmaProtocol.Read(new RemoteRegion(region.address(), 64, region.rkey() + 1),
                0, 64, "guessed");
        long started = System.nanoTime();
        pair.client().tell(read);
        RdmaProtocol.CommandFailed failed = pair.clientEvents().expectMessageClass(RdmaProtocol.CommandFailed.class,
                WAIT);
        long tookNanos = System.nanoTime() - started;
        assertEquals(read, failed.command());
        RdmaProtocol.WorkRequestFailed cause = assertInstanceOf(RdmaProtocol.WorkRequestFailed.class, failed.cause());
        assertEquals(WcStatus.REM_ACCESS_ERR, cause.status());
        assertTrue(cause.getMessage().contains("remote access error"), cause.getMessage());
        assertTrue(tookNanos < AT_ONCE.toNanos(), "took " + tookNanos / 1_000_000 + " ms");
        RdmaTestKit.awaitDisconnected(pair.clientEvents());
        RdmaTestKit.awaitDisconnected(pair.serverEvents());
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }
}
