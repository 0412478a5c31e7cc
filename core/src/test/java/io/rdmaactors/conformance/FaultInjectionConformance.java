package io.rdmaactors.conformance;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdmaactors.cm.AsyncEvent;
import io.rdmaactors.cm.AsyncEventType;
import io.rdmaactors.cm.CmEvent;
import io.rdmaactors.cm.CmEventType;
import io.rdmaactors.verbs.CmId;
import io.rdmaactors.verbs.ConnectionParameters;
import io.rdmaactors.verbs.Device;
import io.rdmaactors.verbs.EventChannel;
import io.rdmaactors.verbs.FaultInjector;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.PortSpace;
import io.rdmaactors.verbs.QpState;
import io.rdmaactors.verbs.ReceiveWorkRequest;
import io.rdmaactors.verbs.SendWorkRequest;
import io.rdmaactors.verbs.VerbsException;
import io.rdmaactors.verbs.WcStatus;
import io.rdmaactors.verbs.WorkCompletion;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Failures injected on demand, and what the fabric reports for each. */
public abstract class FaultInjectionConformance extends FabricConformance {

    /** The CM connects with few transport retries, so a lost link is given up on quickly. */
    private static final ConnectionParameters FEW_RETRIES = new ConnectionParameters(null, 16, 16, 2, 7);

    private FaultInjector faults;

    @BeforeEach
    void assumeFaultInjection() {
        assumeTrue(fabric.faults().isPresent(), "the fabric injects no faults");
        faults = fabric.faults().get();
    }

    @Test
    void cutPortLosesPacketsUntilRetriesRunOut() throws Exception {
        try (Loopback loop = loopback().rts(a -> a.timeout(8).retryCount(2)).open()) {
            MemoryRegion src = loop.a.register(8);
            MemoryRegion inbox = loop.b.register(8);
            loop.b.qp.postReceive(ReceiveWorkRequest.of(1, inbox.sge()));
            faults.cutPort(device(), Loopback.PORT);
            assertEquals(new AsyncEvent.PortEvent(AsyncEventType.PORT_ERR, Loopback.PORT),
                    awaitAsync(device(), e -> e.type() == AsyncEventType.PORT_ERR, "PORT_ERR"));
            loop.a.qp.postSend(SendWorkRequest.send(2, src.sge()));
            WorkCompletion wc = poll(loop.a.cq);
            assertEquals(2, wc.wrId());
            assertEquals(WcStatus.RETRY_EXC_ERR, wc.status());
            awaitState(loop.a.qp, QpState.ERR);
            assertNoCompletion(loop.b.cq);
            faults.restorePort(device(), Loopback.PORT);
            assertEquals(new AsyncEvent.PortEvent(AsyncEventType.PORT_ACTIVE, Loopback.PORT),
                    awaitAsync(device(), e -> e.type() == AsyncEventType.PORT_ACTIVE, "PORT_ACTIVE"));
        }
    }

    @Test
    void droppedConnectionExhaustsTransportRetries() throws Exception {
        try (Loopback loop = Loopback.viaCm(fabric, FEW_RETRIES, FEW_RETRIES)) {
            MemoryRegion src = loop.a.register(8);
            MemoryRegion inbox = loop.b.register(8);
            loop.b.qp.postReceive(ReceiveWorkRequest.of(1, inbox.sge()));
            faults.dropConnection(loop.a.id);
            loop.a.qp.postSend(SendWorkRequest.send(2, src.sge()));
            WorkCompletion wc = poll(loop.a.cq);
            assertEquals(2, wc.wrId());
            assertEquals(WcStatus.RETRY_EXC_ERR, wc.status());
            assertNoCompletion(loop.b.cq);
        }
    }

    @Test
    void killedPeerDisconnectsTheSurvivor() throws Exception {
        try (Loopback loop = Loopback.viaCm(fabric, ConnectionParameters.of(null), ConnectionParameters.of(null))) {
            faults.killPeer(loop.a.id);
            assertEquals(loop.a.id.handle(), await(loop.clientEvents, CmEvent.Disconnected.class).id());
        }
    }

    @Test
    void failNextPostRefusesExactlyOnePost() {
        try (Loopback loop = loopback().open()) {
            MemoryRegion src = loop.a.register(pattern(8, 1));
            MemoryRegion inbox = loop.b.register(8);
            loop.b.qp.postReceive(ReceiveWorkRequest.of(1, inbox.sge()));
            faults.failNextPost(loop.a.qp, VerbsException.ENOMEM);
            VerbsException refused = assertRefused(VerbsException.class, 0,
                    () -> loop.a.qp.postSend(SendWorkRequest.send(2, src.sge())));
            assertEquals(VerbsException.ENOMEM, refused.errno());
            assertNoCompletion(loop.a.cq);
            loop.a.qp.postSend(SendWorkRequest.send(3, src.sge()));
            pollSuccess(loop.a.cq, 3);
            pollSuccess(loop.b.cq, 1);
            assertArrayEquals(patternBytes(8, 1), bytes(inbox.buffer(), 0, 8));
        }
    }

    @Test
    void delayedEventArrivesLateAndOnlyThatOne() throws Exception {
        EventChannel events = opened(fabric.createEventChannel());
        CmId id = opened(fabric.createCmId(events, PortSpace.TCP));
        Duration delay = Duration.ofMillis(400);
        faults.delayNextEvent(events, CmEventType.ADDR_RESOLVED, delay);
        long started = System.nanoTime();
        id.resolveAddress(null, new InetSocketAddress("127.0.0.1", 7471), STEP);
        assertNull(events.await(QUIET), "the delayed event came early");
        await(events, CmEvent.AddrResolved.class);
        assertTrue(System.nanoTime() - started >= delay.toNanos(), "the event came before its delay");
        long routed = System.nanoTime();
        id.resolveRoute(STEP);
        await(events, CmEvent.RouteResolved.class);
        assertTrue(System.nanoTime() - routed < delay.toNanos(), "a second event was delayed too");
    }

    @Test
    void removedDeviceFailsItsIdsAndQps() throws Exception {
        try (Loopback loop = Loopback.viaCm(fabric, ConnectionParameters.of(null), ConnectionParameters.of(null))) {
            Device device = loop.a.id.device();
            MemoryRegion buf = loop.a.register(8);
            loop.a.qp.postReceive(ReceiveWorkRequest.of(1, buf.sge()));
            faults.removeDevice(device);
            assertEquals(loop.a.id.handle(), await(loop.clientEvents, CmEvent.DeviceRemoval.class).id());
            List<Long> removed = new ArrayList<>();
            while (!removed.contains(loop.b.id.handle())) {
                removed.add(await(loop.serverEvents, CmEvent.DeviceRemoval.class).id());
            }
            awaitAsync(device, e -> e.type() == AsyncEventType.DEVICE_FATAL, "DEVICE_FATAL");
            WorkCompletion flushed = poll(loop.a.cq);
            assertEquals(1, flushed.wrId());
            assertEquals(WcStatus.WR_FLUSH_ERR, flushed.status());
            awaitState(loop.a.qp, QpState.ERR);
            awaitState(loop.b.qp, QpState.ERR);
            assertFalse(device.isAlive());
        }
    }
}
