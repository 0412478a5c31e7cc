package io.rdmaactors.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.rdmaactors.verbs.CompletionChannel;
import io.rdmaactors.verbs.CompletionQueue;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.QpAttributes;
import io.rdmaactors.verbs.QpState;
import io.rdmaactors.verbs.ReceiveWorkRequest;
import io.rdmaactors.verbs.ResourceBusyException;
import io.rdmaactors.verbs.SendFlag;
import io.rdmaactors.verbs.SendWorkRequest;
import io.rdmaactors.verbs.WcStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Completion channels: B's receive CQ is on a channel, A sends to it. An event fires once per
 * arm, for the next completion after arming (solicited-only: a solicited receive or an error).
 */
public abstract class CompletionChannelConformance extends FabricConformance {

    private CompletionChannel channel;
    private CompletionQueue cq;
    private Loopback loop;
    private MemoryRegion src;
    private MemoryRegion inbox;

    @BeforeEach
    void connectWithAChannel() {
        channel = device().createCompletionChannel();
        cq = device().createCompletionQueue(32, channel);
        loop = loopback().cqB(cq).open();
        src = loop.a.register(pattern(8, 1));
        inbox = loop.b.register(8 * 8);
        for (int i = 0; i < 8; i++) {
            loop.b.qp.postReceive(ReceiveWorkRequest.of(i, inbox.sge(i * 8, 8)));
        }
    }

    @AfterEach
    void closeInOrder() {
        loop.close();
        cq.close();
        channel.close();
    }

    private void send(long wrId, SendFlag... flags) {
        loop.a.qp.postSend(SendWorkRequest.send(wrId, src.sge()).with(flags));
        pollSuccess(loop.a.cq, wrId);
    }

    @Test
    void noEventWithoutArming() throws Exception {
        send(100);
        pollSuccess(cq, 0);
        assertNull(channel.await(QUIET), "an event for an unarmed CQ");
    }

    @Test
    void oneEventPerArm() throws Exception {
        cq.requestNotify(false);
        send(100);
        send(101);
        assertSame(cq, channel.await(STEP));
        assertNull(channel.await(QUIET), "a second event for one arm");
        cq.ackEvents(1);
        pollSuccess(cq, 0);
        pollSuccess(cq, 1);

        cq.requestNotify(false);
        send(102);
        assertSame(cq, channel.await(STEP), "re-arming fires again");
        cq.ackEvents(1);
        pollSuccess(cq, 2);
    }

    @Test
    void solicitedOnlyArmingWaitsForASolicitedReceive() throws Exception {
        cq.requestNotify(true);
        send(100);
        pollSuccess(cq, 0);
        assertNull(channel.await(QUIET), "an unsolicited receive fired a solicited-only arm");
        send(101, SendFlag.SOLICITED);
        assertSame(cq, channel.await(STEP));
        cq.ackEvents(1);
        pollSuccess(cq, 1);
    }

    @Test
    void solicitedOnlyArmingKeepsAnEarlierNextCompletionArm() throws Exception {
        // the kernel narrows an arm only when it is not already for the next completion
        cq.requestNotify(false);
        cq.requestNotify(true);
        send(100);
        assertSame(cq, channel.await(STEP), "an unsolicited receive did not fire the next-completion arm");
        cq.ackEvents(1);
        pollSuccess(cq, 0);
    }

    @Test
    void solicitedOnlyArmingFiresOnAnErrorCompletion() throws Exception {
        cq.requestNotify(true);
        loop.b.qp.modify(QpAttributes.of().state(QpState.ERR));
        assertSame(cq, channel.await(STEP));
        cq.ackEvents(1);
        assertEquals(WcStatus.WR_FLUSH_ERR, poll(cq).status());
    }

    @Test
    void cqWithUnacknowledgedEventsIsBusy() throws Exception {
        cq.requestNotify(false);
        send(100);
        assertSame(cq, channel.await(STEP));
        loop.close();
        assertThrows(ResourceBusyException.class, cq::close);
        cq.ackEvents(1);
        cq.close();
    }
}
