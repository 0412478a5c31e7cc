package io.rdmaactors.actors;

import static io.rdmaactors.actors.Connections.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaactors.actors.RdmaProtocol.ConnectionEvent;
import io.rdmaactors.testkit.RdmaTestKit;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** 100 connections to one listener, 1,000 messages each, all in flight together. */
class ManyConnectionsTest {

    private static final int CONNECTIONS = 100;
    private static final int MESSAGES = 1_000;
    private static final int WINDOW = 10;

    private RdmaTestKit kit;

    @BeforeEach
    void start() {
        kit = RdmaTestKit.create("rdma-actors.send-queue-depth = 16\nrdma-actors.receive-queue-depth = 32\n"
                + "rdma-actors.buffer-size = 64");
    }

    @AfterEach
    void stop() {
        kit.close();
    }

    @Test
    void hundredConnectionsEachExchangeAThousandMessagesAckedExactlyOnce() {
        RdmaTestKit.Listener listener = kit.listen(CONNECTIONS);
        List<RdmaTestKit.Pair> pairs = new ArrayList<>();
        for (int c = 0; c < CONNECTIONS; c++) {
            pairs.add(kit.connect(listener));
        }
        List<Set<Object>> acked = new ArrayList<>();
        pairs.forEach(p -> acked.add(new HashSet<>()));
        for (int round = 0; round < MESSAGES / WINDOW; round++) {
            for (int c = 0; c < CONNECTIONS; c++) {
                for (int i = 0; i < WINDOW; i++) {
                    int n = round * WINDOW + i;
                    pairs.get(c).client().tell(RdmaProtocol.Send.of(ByteBuffer.allocate(8).putInt(c).putInt(n).array(),
                            n));
                }
            }
            for (int c = 0; c < CONNECTIONS; c++) {
                for (ConnectionEvent e : pairs.get(c).clientEvents().receiveSeveralMessages(WINDOW, WAIT)) {
                    RdmaProtocol.Acked a = (RdmaProtocol.Acked) e;
                    assertTrue(acked.get(c).add(a.token()), "acked twice: " + a.token());
                }
            }
        }
        for (int c = 0; c < CONNECTIONS; c++) {
            assertEquals(MESSAGES, acked.get(c).size());
            List<ConnectionEvent> received = pairs.get(c).serverEvents().receiveSeveralMessages(MESSAGES, WAIT);
            for (int n = 0; n < MESSAGES; n++) {
                ByteBuffer data = ((RdmaProtocol.Received) received.get(n)).data().asByteBuffer();
                assertEquals(c, data.getInt(), "a message reached another connection");
                assertEquals(n, data.getInt());
            }
        }
        pairs.forEach(p -> kit.close(p));
        kit.unbind(listener);
        kit.awaitNoLeaks(WAIT);
    }
}
