package io.rdmaactors.actors;

import static io.rdmaactors.actors.Connections.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rdmaactors.actors.RdmaProtocol.MulticastEvent;
import io.rdmaactors.testkit.RdmaTestKit;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Multicast over UD: one sender, three receivers, every datagram reaches all three. */
class MulticastTest {

    private static final InetSocketAddress GROUP = new InetSocketAddress("239.1.2.3", 0);
    private static final int MESSAGES = 100;

    private RdmaTestKit kit;

    @BeforeEach
    void start() {
        kit = RdmaTestKit.create("rdma-actors.receive-queue-depth = 128");
    }

    @AfterEach
    void stop() {
        kit.close();
    }

    @Test
    void everyMemberReceivesEveryDatagram() {
        List<TestProbe<MulticastEvent>> members = new ArrayList<>();
        List<RdmaProtocol.Joined> joined = new ArrayList<>();
        for (int m = 0; m < 4; m++) {
            TestProbe<MulticastEvent> probe = kit.probe();
            kit.manager().tell(new RdmaProtocol.JoinMulticast(GROUP, kit.address(0), probe.getRef()));
            joined.add(probe.expectMessageClass(RdmaProtocol.Joined.class, WAIT));
            members.add(probe);
        }
        TestProbe<MulticastEvent> sender = members.get(0);
        Set<Object> sent = new HashSet<>();
        List<Integer> looped = new ArrayList<>();
        for (int n = 0; n < MESSAGES; n++) {
            joined.get(0).endpoint().tell(RdmaProtocol.SendToGroup.of(ByteBuffer.allocate(4).putInt(n).array(), n));
            // the sender is a member too: its datagram loops back to it, as on IB and RoCE
            while (sent.size() <= n || looped.size() <= n) {
                MulticastEvent e = sender.receiveMessage(WAIT);
                if (e instanceof RdmaProtocol.MulticastSent s) {
                    sent.add(s.ack());
                } else {
                    looped.add(((RdmaProtocol.MulticastReceived) e).data().asByteBuffer().getInt());
                }
            }
        }
        assertEquals(MESSAGES, sent.size());
        for (int n = 0; n < MESSAGES; n++) {
            assertEquals(n, looped.get(n));
        }
        for (TestProbe<MulticastEvent> receiver : members.subList(1, 4)) {
            List<MulticastEvent> got = receiver.receiveSeveralMessages(MESSAGES, WAIT);
            for (int n = 0; n < MESSAGES; n++) {
                assertEquals(n, ((RdmaProtocol.MulticastReceived) got.get(n)).data().asByteBuffer().getInt());
            }
        }
        sender.expectNoMessage(java.time.Duration.ofMillis(100));
        for (int m = 0; m < 4; m++) {
            joined.get(m).endpoint().tell(new RdmaProtocol.Leave());
            members.get(m).expectMessageClass(RdmaProtocol.Left.class, WAIT);
        }
        kit.awaitNoLeaks(WAIT);
    }
}
