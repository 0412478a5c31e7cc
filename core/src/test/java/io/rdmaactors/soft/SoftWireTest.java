package io.rdmaactors.soft;

import io.rdmaactors.cm.AddressVector;
import io.rdmaactors.conformance.Loopback;
import io.rdmaactors.soft.wire.Packet;
import io.rdmaactors.verbs.Access;
import io.rdmaactors.verbs.AddressHandle;
import io.rdmaactors.verbs.ConnectionParameters;
import io.rdmaactors.verbs.CompletionQueue;
import io.rdmaactors.verbs.Device;
import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.ProtectionDomain;
import io.rdmaactors.verbs.QpAttributes;
import io.rdmaactors.verbs.QpInitAttributes;
import io.rdmaactors.verbs.QpState;
import io.rdmaactors.verbs.QueuePair;
import io.rdmaactors.verbs.ReceiveWorkRequest;
import io.rdmaactors.verbs.SendFlag;
import io.rdmaactors.verbs.SendWorkRequest;
import io.rdmaactors.verbs.WcOpcode;
import io.rdmaactors.verbs.WcStatus;
import io.rdmaactors.verbs.WorkCompletion;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A work request between QPs of one JVM runs after its post returned, on the fabric's wire, as a
 * device runs it: the buffer is the fabric's until the completion, which a program that reuses
 * it early finds out here as on hardware. A UD datagram goes the same way. Option {@code wire=sync}
 * runs them inside the post.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SoftWireTest {

    private static final int GRH = 40;
    private static final int QKEY = 0x1111_2222;

    @Test
    void aWriteRunsAfterItsPostReturnedAndReadsItsBufferThen() throws Exception {
        try (Fabric fabric = Fabric.open("soft");
             Loopback loop = Loopback.on(fabric.devices().get(0)).open()) {
            MemoryRegion target = loop.b.register(8, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
            MemoryRegion source = loop.a.register(8);
            source.buffer().putLong(0, 1);
            CountDownLatch held = new CountDownLatch(1);
            ((SoftFabric) fabric).onWire(() -> await(held)); // the wire is busy with something else

            loop.a.qp.postSend(SendWorkRequest.write(1, target.address(), target.rkey(), source.sge()));
            assertEquals(0, loop.a.cq.poll(new WorkCompletion[1]), "no completion while the wire has not carried it");
            assertEquals(0, target.buffer().getLong(0), "nothing written yet");
            source.buffer().putLong(0, 2); // reused before its completion: what goes out is what is there then
            held.countDown();

            assertEquals(WcStatus.SUCCESS, awaitCompletion(loop.a.cq).status());
            assertEquals(2, target.buffer().getLong(0));
        }
    }

    /**
     * A READ's response is read from the responder's memory as it goes out, so a later request
     * could change what it returns (a TcpLink serializes it after the I/O thread ran what came
     * next): a fenced request goes only once every READ and atomic before it completed.
     */
    @Test
    void aFencedRequestWaitsForTheReadBeforeIt() throws Exception {
        try (Fabric fabric = Fabric.open("soft");
             Loopback loop = Loopback.on(fabric.devices().get(0)).open()) {
            MemoryRegion remote = loop.b.register(8, Access.LOCAL_WRITE, Access.REMOTE_READ, Access.REMOTE_WRITE);
            remote.buffer().putLong(0, 1);
            MemoryRegion readInto = loop.a.register(8);
            MemoryRegion source = loop.a.register(8);
            source.buffer().putLong(0, 2);
            CountDownLatch held = new CountDownLatch(1);
            ((SoftFabric) fabric).onWire(() -> await(held)); // the wire is busy with something else

            loop.a.qp.postSend(SendWorkRequest.read(1, remote.address(), remote.rkey(), readInto.sge()),
                    SendWorkRequest.write(2, remote.address(), remote.rkey(), source.sge()).with(SendFlag.FENCE));
            SoftQueuePair requester = (SoftQueuePair) loop.a.qp;
            requester.sendLock.lock();
            try {
                assertEquals(1, requester.requester.inflight.size(), "only the READ went out");
                assertEquals(1, requester.requester.inflight.peek().wr.wrId());
            } finally {
                requester.sendLock.unlock();
            }
            held.countDown();

            assertEquals(1, awaitCompletion(loop.a.cq).wrId());
            WorkCompletion write = awaitCompletion(loop.a.cq);
            assertEquals(2, write.wrId());
            assertEquals(WcStatus.SUCCESS, write.status());
            assertEquals(1, readInto.buffer().getLong(0), "the READ saw the memory before the WRITE");
            assertEquals(2, remote.buffer().getLong(0));
        }
    }

    /**
     * A request flushed before the wire carried it (its QP entered ERR) does not go out after: from
     * its flush completion on its buffer is the application's again, and may hold another message.
     */
    @Test
    void aRequestFlushedBeforeTheWireCarriedItStaysHome() throws Exception {
        try (Fabric fabric = Fabric.open("soft");
             Loopback loop = Loopback.on(fabric.devices().get(0)).open()) {
            MemoryRegion source = loop.a.register(8);
            MemoryRegion inbox = loop.b.register(8);
            loop.b.qp.postReceive(ReceiveWorkRequest.of(100, inbox.sge()));
            source.buffer().putLong(0, 1);
            CountDownLatch held = new CountDownLatch(1);
            ((SoftFabric) fabric).onWire(() -> await(held)); // the wire is busy with something else

            loop.a.qp.postSend(SendWorkRequest.send(1, source.sge()));
            loop.a.qp.modify(QpAttributes.of().state(QpState.ERR));
            assertEquals(WcStatus.WR_FLUSH_ERR, awaitCompletion(loop.a.cq).status());
            source.buffer().putLong(0, 2); // the next message
            held.countDown();
            CountDownLatch carried = new CountDownLatch(1);
            ((SoftFabric) fabric).onWire(carried::countDown); // runs after what the wire held
            await(carried);

            assertEquals(0, loop.b.cq.poll(new WorkCompletion[1]), "nothing reached the peer");
            assertEquals(0, inbox.buffer().getLong(0));
        }
    }

    /**
     * A READ's response over a link comes in segments: each lands at its offset, across the READ's
     * SGEs, and the READ completes with the last; a response that comes after finds it done.
     */
    @Test
    void aReadCompletesWithTheLastSegmentOfItsResponse() throws Exception {
        try (Fabric fabric = Fabric.open("soft");
             Loopback loop = Loopback.on(fabric.devices().get(0)).open()) {
            MemoryRegion remote = loop.b.register(8, Access.LOCAL_WRITE, Access.REMOTE_READ);
            MemoryRegion into = loop.a.register(8);
            SoftQueuePair qp = (SoftQueuePair) loop.a.qp;
            CountDownLatch held = new CountDownLatch(1);
            ((SoftFabric) fabric).onWire(() -> await(held)); // the READ itself waits on the wire
            try {
                qp.postSend(SendWorkRequest.read(1, remote.address(), remote.rkey(), into.sge(0, 3), into.sge(3, 5)));
                long psn;
                qp.sendLock.lock();
                try {
                    psn = qp.requester.inflight.peek().psn;
                } finally {
                    qp.sendLock.unlock();
                }
                qp.completer.onResponse(Packet.readResponseSegment(psn, 0, ByteBuffer.wrap(new byte[] {1, 2, 3, 4}),
                        true));
                assertEquals(0, loop.a.cq.poll(new WorkCompletion[1]), "no completion before the last segment");
                qp.completer.onResponse(Packet.readResponseSegment(psn, 4, ByteBuffer.wrap(new byte[] {5, 6, 7, 8}),
                        false));
                WorkCompletion read = awaitCompletion(loop.a.cq);
                assertEquals(WcStatus.SUCCESS, read.status());
                assertEquals(8, read.byteLen());
            } finally {
                held.countDown();
            }
            CountDownLatch carried = new CountDownLatch(1);
            ((SoftFabric) fabric).onWire(carried::countDown); // after the READ's own response came
            await(carried);
            byte[] bytes = new byte[8];
            into.buffer().get(0, bytes);
            assertArrayEquals(new byte[] {1, 2, 3, 4, 5, 6, 7, 8}, bytes);
            assertEquals(0, loop.a.cq.poll(new WorkCompletion[1]), "the READ completed once");
        }
    }

    @Test
    void aDatagramGoesOnTheWireAfterItsPostReturned() throws Exception {
        try (Fabric fabric = Fabric.open("soft")) {
            Datagram d = Datagram.between(fabric, 1);
            CountDownLatch held = new CountDownLatch(1);
            ((SoftFabric) fabric).onWire(() -> await(held)); // the wire is busy with something else

            d.send();
            assertEquals(0, d.sendCq.poll(new WorkCompletion[1]), "no send completion while the wire has not carried it");
            assertEquals(0, d.recvCq.poll(new WorkCompletion[1]), "nothing delivered yet");
            d.source.buffer().putLong(0, 2); // reused before its completion: what goes out is what is there then
            held.countDown();

            assertEquals(WcStatus.SUCCESS, awaitCompletion(d.recvCq).status());
            assertEquals(WcStatus.SUCCESS, awaitCompletion(d.sendCq).status());
            assertEquals(2, d.inbox.buffer().getLong(GRH));
        }
    }

    @Test
    void withWireSyncADatagramIsDeliveredWhenItsPostReturns() throws Exception {
        try (Fabric fabric = Fabric.open("soft", Map.of("wire", "sync"))) {
            Datagram d = Datagram.between(fabric, 7);
            d.send();
            WorkCompletion[] wc = new WorkCompletion[1];
            assertEquals(1, d.recvCq.poll(wc), "received before the post returned");
            assertEquals(1, d.sendCq.poll(wc), "completed before the post returned");
            assertEquals(7, d.inbox.buffer().getLong(GRH));
        }
    }

    @Test
    void withWireSyncAWriteIsDoneWhenItsPostReturns() throws Exception {
        try (Fabric fabric = Fabric.open("soft", Map.of("wire", "sync"));
             Loopback loop = Loopback.on(fabric.devices().get(0)).open()) {
            MemoryRegion target = loop.b.register(8, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
            MemoryRegion source = loop.a.register(ByteBuffer.allocateDirect(8).putLong(0, 7));
            loop.a.qp.postSend(SendWorkRequest.write(1, target.address(), target.rkey(), source.sge()));
            WorkCompletion[] wc = new WorkCompletion[1];
            assertEquals(1, loop.a.cq.poll(wc));
            assertEquals(WcStatus.SUCCESS, wc[0].status());
            assertEquals(7, target.buffer().getLong(0), "written before the post returned");
        }
    }

    /** One 8-byte datagram between two UD QPs of a fabric's first device, a receive posted for it. */
    private record Datagram(QueuePair sender, QueuePair receiver, AddressHandle ah, CompletionQueue sendCq,
                            CompletionQueue recvCq, MemoryRegion source, MemoryRegion inbox) {

        static Datagram between(Fabric fabric, long value) {
            Device device = fabric.devices().get(0);
            ProtectionDomain pd = device.allocateProtectionDomain();
            CompletionQueue sendCq = device.createCompletionQueue(4, null);
            CompletionQueue recvCq = device.createCompletionQueue(4, null);
            Datagram d = new Datagram(udQueuePair(pd, sendCq, recvCq), udQueuePair(pd, sendCq, recvCq),
                    pd.createAddressHandle(AddressVector.global(device.queryPort(Loopback.PORT).gid(0), Loopback.PORT)),
                    sendCq, recvCq, pd.register(ByteBuffer.allocateDirect(8).putLong(0, value)),
                    pd.register(ByteBuffer.allocateDirect(GRH + 8)));
            d.receiver.postReceive(ReceiveWorkRequest.of(1, d.inbox.sge()));
            return d;
        }

        private static QueuePair udQueuePair(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq) {
            QueuePair qp = pd.createQueuePair(QpInitAttributes.ud(sendCq, 4, 4).withCompletionQueues(sendCq, recvCq));
            qp.modify(QpAttributes.of().state(QpState.INIT).portNum(Loopback.PORT).pkeyIndex(0).qkey(QKEY));
            qp.modify(QpAttributes.of().state(QpState.RTR));
            qp.modify(QpAttributes.of().state(QpState.RTS).sqPsn(0));
            return qp;
        }

        void send() {
            sender.postSend(SendWorkRequest.send(2, source.sge()).to(ah, receiver.qpNum(), QKEY));
        }
    }

    /**
     * End-to-end flow control (credits): a requester sends no more Sends than its ACKs said the
     * responder has receives for, and past them one at a time, to learn of receives posted since.
     * Without credits every Send past the receives is in flight, and after each RNR NAK all of
     * them go again.
     */
    @Test
    void sendsPastTheRespondersReceivesGoOneAtATime() throws Exception {
        try (Fabric fabric = Fabric.open("soft");
             Loopback loop = Loopback.on(fabric.devices().get(0)).rtr(a -> a.minRnrTimer(1))
                     .rts(a -> a.rnrRetry(7)).open()) {
            MemoryRegion source = loop.a.register(8);
            MemoryRegion inbox = loop.b.register(8 * 8);
            for (int r = 0; r < 2; r++) {
                loop.b.qp.postReceive(ReceiveWorkRequest.of(100 + r, inbox.sge(r * 8, 8)));
            }
            for (int s = 0; s < 8; s++) {
                loop.a.qp.postSend(SendWorkRequest.send(s, source.sge()));
            }
            for (int s = 0; s < 2; s++) {
                assertEquals(s, awaitCompletion(loop.a.cq).wrId());
                assertEquals(100 + s, awaitCompletion(loop.b.cq).wrId());
            }
            SoftQueuePair requester = (SoftQueuePair) loop.a.qp;
            int most = 0;
            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(50);
            while (System.nanoTime() < until) { // meanwhile the probe meets RNR NAKs, 10 us apart
                requester.sendLock.lock();
                try {
                    most = Math.max(most, requester.requester.inflight.size());
                } finally {
                    requester.sendLock.unlock();
                }
                // leave the lock to the wire between two looks: taken back at once, it starved
                // the wire for the whole window on a busy machine (0 seen in flight)
                LockSupport.parkNanos(10_000);
            }
            assertEquals(1, most, "one Send at a time in flight while the responder has no receive");
            for (int r = 2; r < 8; r++) {
                loop.b.qp.postReceive(ReceiveWorkRequest.of(100 + r, inbox.sge(r * 8, 8)));
            }
            for (int s = 2; s < 8; s++) {
                WorkCompletion sent = awaitCompletion(loop.a.cq);
                assertEquals(WcStatus.SUCCESS, sent.status());
                assertEquals(s, sent.wrId());
                assertEquals(100 + s, awaitCompletion(loop.b.cq).wrId());
            }
        }
    }

    /**
     * The wire carries a run of one QP's requests with one ACK (IB ACK coalescing): the requester
     * takes the last, which stands for those before it, and every Send still completes once, in
     * order.
     */
    @Test
    void aRunOfRequestsIsAcknowledgedOnce() throws Exception {
        try (Fabric fabric = Fabric.open("soft");
             Loopback loop = Loopback.on(fabric.devices().get(0)).open()) {
            MemoryRegion source = firstOf(loop, 8); // its ACK brings the responder's credits: the run goes at once
            int before = responsesTaken(loop.a.qp);
            CountDownLatch held = new CountDownLatch(1);
            ((SoftFabric) fabric).onWire(() -> await(held)); // the run waits on the wire behind this

            for (int s = 1; s < 8; s++) {
                loop.a.qp.postSend(SendWorkRequest.send(s, source.sge()));
            }
            held.countDown();

            for (int s = 1; s < 8; s++) {
                WorkCompletion sent = awaitCompletion(loop.a.cq);
                assertEquals(WcStatus.SUCCESS, sent.status());
                assertEquals(s, sent.wrId());
            }
            assertEquals(1, responsesTaken(loop.a.qp) - before, "one ACK for the seven Sends");
        }
    }

    /**
     * Whatever the wire carries after a run of requests sees them acknowledged: here the requester
     * enters ERR behind its Sends, which completed before it and are not flushed.
     */
    @Test
    void aHeldAckGoesBeforeWhatTheWireCarriesNext() throws Exception {
        try (Fabric fabric = Fabric.open("soft");
             Loopback loop = Loopback.on(fabric.devices().get(0)).open()) {
            MemoryRegion source = firstOf(loop, 4);
            CountDownLatch held = new CountDownLatch(1);
            ((SoftFabric) fabric).onWire(() -> await(held));

            for (int s = 1; s < 4; s++) {
                loop.a.qp.postSend(SendWorkRequest.send(s, source.sge()));
            }
            ((SoftFabric) fabric).onWire(() -> loop.a.qp.modify(QpAttributes.of().state(QpState.ERR)));
            held.countDown();

            for (int s = 1; s < 4; s++) {
                WorkCompletion sent = awaitCompletion(loop.a.cq);
                assertEquals(s, sent.wrId());
                assertEquals(WcStatus.SUCCESS, sent.status(), "acknowledged before the QP failed");
            }
        }
    }

    /**
     * Posts {@code receives} 8-byte receives (wr 100 on) at the loop's second end, sends wr 0 from
     * its first and awaits both completions, so that its ACK gave credits; the Sends' 8 bytes.
     */
    private static MemoryRegion firstOf(Loopback loop, int receives) {
        MemoryRegion inbox = loop.b.register(8 * receives, Access.LOCAL_WRITE);
        for (int r = 0; r < receives; r++) {
            loop.b.qp.postReceive(ReceiveWorkRequest.of(100 + r, inbox.sge(r * 8, 8)));
        }
        MemoryRegion source = loop.a.register(8);
        loop.a.qp.postSend(SendWorkRequest.send(0, source.sge()));
        assertEquals(0, awaitCompletion(loop.a.cq).wrId());
        assertEquals(100, awaitCompletion(loop.b.cq).wrId());
        return source;
    }

    /** How many responses the requester of {@code qp} took that made progress. */
    private static int responsesTaken(QueuePair qp) throws ReflectiveOperationException {
        Field progress = SoftRequester.class.getDeclaredField("progress");
        progress.setAccessible(true);
        SoftQueuePair soft = (SoftQueuePair) qp;
        soft.sendLock.lock();
        try {
            return progress.getInt(soft.requester);
        } finally {
            soft.sendLock.unlock();
        }
    }

    /**
     * An empty poll of a CQ whose QP has a peer in this JVM carries what is on the wire, so a
     * connection awaiting its answer does not wait for the wire's thread to be woken: here nothing
     * wakes that thread (its wake-ups go to a stand-in), and the Send and its ACK still go, each
     * after its post returned.
     */
    @Test
    void anEmptyPollCarriesTheWireWhileItsThreadSleeps() throws Exception {
        try (Fabric fabric = Fabric.open("soft");
             Loopback loop = Loopback.viaCm(fabric, ConnectionParameters.of(null), ConnectionParameters.of(null))) {
            MemoryRegion received = loop.b.register(8, Access.LOCAL_WRITE);
            MemoryRegion sent = loop.a.register(8);
            Thread wireThread = sleepingWireThread(fabric);
            try {
                loop.b.qp.postReceive(ReceiveWorkRequest.of(1, received.sge()));
                sent.buffer().putLong(0, 42);
                loop.a.qp.postSend(SendWorkRequest.send(2, sent.sge()));

                assertEquals(WcOpcode.RECV, awaitCompletion(loop.b.cq).opcode());
                assertEquals(42, received.buffer().getLong(0));
                WorkCompletion acked = awaitCompletion(loop.a.cq);
                assertEquals(WcStatus.SUCCESS, acked.status());
                assertEquals(2, acked.wrId());
            } finally {
                wakeUpFrom(fabric, wireThread);
            }
        }
    }

    /**
     * Waits until the wire's thread (started by the connection's CM messages) sleeps with nothing
     * to carry and no poll to look after, then directs its wake-ups to a thread that never runs.
     */
    private static Thread sleepingWireThread(Fabric fabric) throws ReflectiveOperationException {
        SoftWire wire = ((SoftFabric) fabric).wire();
        Field thread = wireThreadField();
        Thread real = (Thread) thread.get(wire);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (real.getState() != Thread.State.WAITING) {
            assertTrue(System.nanoTime() < deadline, "the wire's thread sleeps");
            LockSupport.parkNanos(1_000_000);
        }
        thread.set(wire, new Thread(() -> { }));
        return real;
    }

    private static void wakeUpFrom(Fabric fabric, Thread real) throws ReflectiveOperationException {
        wireThreadField().set(((SoftFabric) fabric).wire(), real);
        LockSupport.unpark(real);
    }

    private static Field wireThreadField() throws ReflectiveOperationException {
        Field thread = SoftWire.class.getDeclaredField("thread");
        thread.setAccessible(true);
        return thread;
    }

    /** The next completion of {@code cq}, once the wire is free to carry what makes it. */
    private static WorkCompletion awaitCompletion(CompletionQueue cq) {
        WorkCompletion[] wc = new WorkCompletion[1];
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (cq.poll(wc) == 0) {
            assertTrue(System.nanoTime() < deadline, "a completion once the wire is free");
            Thread.onSpinWait();
        }
        return wc[0];
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
