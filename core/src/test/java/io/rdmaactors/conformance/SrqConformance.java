package io.rdmaactors.conformance;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaactors.cm.AsyncEvent;
import io.rdmaactors.cm.AsyncEventType;
import io.rdmaactors.verbs.CompletionQueue;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.ProtectionDomain;
import io.rdmaactors.verbs.QpInitAttributes;
import io.rdmaactors.verbs.QueuePair;
import io.rdmaactors.verbs.ReceiveWorkRequest;
import io.rdmaactors.verbs.ResourceBusyException;
import io.rdmaactors.verbs.SendWorkRequest;
import io.rdmaactors.verbs.SharedReceiveQueue;
import io.rdmaactors.verbs.WcOpcode;
import io.rdmaactors.verbs.WorkCompletion;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/** Shared receive queues: receives taken in order by whichever QP gets a message, and the limit event. */
public abstract class SrqConformance extends FabricConformance {

    private static final int SLOT = 16;

    @Test
    void receivesAreSharedInOrderAndNameTheReceivingQp() {
        try (ProtectionDomain pd = device().allocateProtectionDomain();
             CompletionQueue cq = device().createCompletionQueue(32, null);
             SharedReceiveQueue srq = pd.createSharedReceiveQueue(8, 1);
             MemoryRegion inbox = pd.register(ByteBuffer.allocateDirect(4 * SLOT))) {
            try (Loopback one = loopback().pd(pd).cqB(cq).srqB(srq).open();
                 Loopback two = loopback().pd(pd).cqB(cq).srqB(srq).open()) {
                for (int i = 0; i < 4; i++) {
                    srq.postReceive(ReceiveWorkRequest.of(i, inbox.sge(i * SLOT, SLOT)));
                }
                assertEquals(4, srq.posted());
                Loopback[] senders = {one, two, one};
                for (int i = 0; i < senders.length; i++) {
                    Loopback loop = senders[i];
                    MemoryRegion src = loop.a.register(pattern(SLOT, 20 + i));
                    loop.a.qp.postSend(SendWorkRequest.send(i, src.sge()));
                    WorkCompletion wc = pollSuccess(cq, i);
                    assertEquals(WcOpcode.RECV, wc.opcode());
                    assertEquals(loop.b.qp.qpNum(), wc.qpNum(), "message " + i + " names the wrong QP");
                    assertArrayEquals(patternBytes(SLOT, 20 + i), bytes(inbox.buffer(), i * SLOT, SLOT));
                    pollSuccess(loop.a.cq, i);
                }
                assertEquals(1, srq.posted());
            }
        }
    }

    @Test
    void limitFiresOnceWhenFewerReceivesRemain() throws Exception {
        try (ProtectionDomain pd = device().allocateProtectionDomain();
             CompletionQueue cq = device().createCompletionQueue(32, null);
             SharedReceiveQueue srq = pd.createSharedReceiveQueue(8, 1);
             MemoryRegion inbox = pd.register(ByteBuffer.allocateDirect(4 * SLOT))) {
            try (Loopback loop = loopback().pd(pd).cqB(cq).srqB(srq).open()) {
                MemoryRegion src = loop.a.register(SLOT);
                for (int i = 0; i < 4; i++) {
                    srq.postReceive(ReceiveWorkRequest.of(i, inbox.sge(i * SLOT, SLOT)));
                }
                srq.armLimit(3);
                loop.a.qp.postSend(SendWorkRequest.send(0, src.sge()));
                pollSuccess(cq, 0);
                assertTrue(drainAsync(device()).stream().noneMatch(e -> e.type() == AsyncEventType.SRQ_LIMIT_REACHED),
                        "the limit fired with 3 of 3 receives left");
                loop.a.qp.postSend(SendWorkRequest.send(1, src.sge()));
                pollSuccess(cq, 1);
                AsyncEvent e = awaitAsync(device(), ev -> ev.type() == AsyncEventType.SRQ_LIMIT_REACHED,
                        "SRQ_LIMIT_REACHED");
                assertEquals(new AsyncEvent.SrqEvent(AsyncEventType.SRQ_LIMIT_REACHED, srq.handle()), e);
                loop.a.qp.postSend(SendWorkRequest.send(2, src.sge()));
                pollSuccess(cq, 2);
                assertTrue(drainAsync(device()).stream().noneMatch(ev -> ev.type() == AsyncEventType.SRQ_LIMIT_REACHED),
                        "the limit fired again without being re-armed");
            }
        }
    }

    @Test
    void srqIsBusyWhileAQpIsAttached() {
        try (ProtectionDomain pd = device().allocateProtectionDomain();
             CompletionQueue cq = device().createCompletionQueue(8, null)) {
            SharedReceiveQueue srq = pd.createSharedReceiveQueue(4, 1);
            QueuePair qp = pd.createQueuePair(QpInitAttributes.rc(cq, 4, 4).withSrq(srq));
            assertThrows(ResourceBusyException.class, srq::close);
            qp.close();
            srq.close();
        }
    }
}
