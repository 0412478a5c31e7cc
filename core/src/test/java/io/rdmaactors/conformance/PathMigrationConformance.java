package io.rdmaactors.conformance;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdmaactors.cm.AddressVector;
import io.rdmaactors.cm.AsyncEvent;
import io.rdmaactors.cm.AsyncEventType;
import io.rdmaactors.verbs.DeviceAttributes;
import io.rdmaactors.verbs.FaultInjector;
import io.rdmaactors.verbs.LinkLayer;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.MigrationState;
import io.rdmaactors.verbs.QpAttributes;
import io.rdmaactors.verbs.QueuePair;
import io.rdmaactors.verbs.ReceiveWorkRequest;
import io.rdmaactors.verbs.SendWorkRequest;
import io.rdmaactors.verbs.WcStatus;
import io.rdmaactors.verbs.WorkCompletion;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Automatic path migration between the two ports of one device: primary paths through port 1,
 * alternate paths through port 2. Real kernels refuse APM on RoCE, so it needs InfiniBand.
 */
public abstract class PathMigrationConformance extends FabricConformance {

    private static final int ALTERNATE_PORT = 2;
    private static final int MESSAGE = 8;

    @BeforeEach
    void assumeAutomaticPathMigration() {
        DeviceAttributes attributes = device().query();
        assumeTrue(attributes.autoPathMigration(), "the device does not do APM");
        assumeTrue(attributes.physicalPortCount() >= 2, "APM here needs a second port");
        assumeTrue(device().queryPort(Loopback.PORT).linkLayer() == LinkLayer.INFINIBAND, "APM needs InfiniBand");
    }

    private Loopback connected() {
        // a short transport timeout: a lost packet is noticed in about a millisecond
        return loopback().depths(32, 32).rts(a -> a.timeout(8).retryCount(2)).open();
    }

    private void loadAlternatePath(QueuePair qp) {
        byte[] gid = device().queryPort(ALTERNATE_PORT).gid(0);
        qp.modify(QpAttributes.of().alternatePath(AddressVector.global(gid, ALTERNATE_PORT))
                .alternatePortNum(ALTERNATE_PORT).migrationState(MigrationState.REARM));
        assertEquals(MigrationState.ARMED, qp.query().migrationState());
    }

    private FaultInjector faults() {
        Optional<FaultInjector> faults = fabric.faults();
        assumeTrue(faults.isPresent(), "cutting a port needs fault injection");
        return faults.get();
    }

    /** Sends messages {@code from} to {@code to - 1} and checks each arrived intact, in order. */
    private static void exchange(Loopback loop, MemoryRegion src, MemoryRegion inbox, int from, int to) {
        for (int i = from; i < to; i++) {
            src.buffer().put(i * MESSAGE, patternBytes(MESSAGE, i));
            loop.a.qp.postSend(SendWorkRequest.send(i, src.sge(i * MESSAGE, MESSAGE)));
        }
        for (int i = from; i < to; i++) {
            WorkCompletion send = poll(loop.a.cq);
            assertEquals(WcStatus.SUCCESS, send.status(), "message " + i + ": " + send);
            assertEquals(i, send.wrId());
            pollSuccess(loop.b.cq, i);
            assertArrayEquals(patternBytes(MESSAGE, i), bytes(inbox.buffer(), i * MESSAGE, MESSAGE), "message " + i);
        }
    }

    private static MemoryRegion postReceives(Loopback loop, int count) {
        MemoryRegion inbox = loop.b.register(count * MESSAGE);
        for (int i = 0; i < count; i++) {
            loop.b.qp.postReceive(ReceiveWorkRequest.of(i, inbox.sge(i * MESSAGE, MESSAGE)));
        }
        return inbox;
    }

    @Test
    void armedQpMigratesWhenThePrimaryPortIsCutAndLosesNothing() throws Exception {
        FaultInjector faults = faults();
        try (Loopback loop = connected()) {
            loadAlternatePath(loop.a.qp);
            loadAlternatePath(loop.b.qp);
            MemoryRegion src = loop.a.register(20 * MESSAGE);
            MemoryRegion inbox = postReceives(loop, 20);
            exchange(loop, src, inbox, 0, 10);
            faults.cutPort(device(), Loopback.PORT);
            exchange(loop, src, inbox, 10, 20);
            int qpNum = loop.a.qp.qpNum();
            AsyncEvent e = awaitAsync(device(), ev -> ev instanceof AsyncEvent.QpEvent q
                    && q.type() == AsyncEventType.PATH_MIG && q.qpNum() == qpNum, "PATH_MIG");
            assertEquals(new AsyncEvent.QpEvent(AsyncEventType.PATH_MIG, qpNum), e);
            assertEquals(MigrationState.MIGRATED, loop.a.qp.query().migrationState());
        }
    }

    @Test
    void withTheAlternatePathDownTooMigrationFailsAndRetriesRunOut() throws Exception {
        FaultInjector faults = faults();
        try (Loopback loop = connected()) {
            loadAlternatePath(loop.a.qp);
            loadAlternatePath(loop.b.qp);
            MemoryRegion src = loop.a.register(MESSAGE);
            postReceives(loop, 1);
            faults.cutPort(device(), Loopback.PORT);
            faults.cutPort(device(), ALTERNATE_PORT);
            loop.a.qp.postSend(SendWorkRequest.send(1, src.sge()));
            int qpNum = loop.a.qp.qpNum();
            awaitAsync(device(), ev -> ev instanceof AsyncEvent.QpEvent q
                    && q.type() == AsyncEventType.PATH_MIG_ERR && q.qpNum() == qpNum, "PATH_MIG_ERR");
            WorkCompletion wc = poll(loop.a.cq);
            assertEquals(1, wc.wrId());
            assertEquals(WcStatus.RETRY_EXC_ERR, wc.status());
        }
    }

    @Test
    void settingMigratedOnAnArmedQpMigratesAtOnceWithoutAnEvent() throws Exception {
        try (Loopback loop = connected()) {
            loadAlternatePath(loop.a.qp);
            loadAlternatePath(loop.b.qp);
            for (QueuePair qp : new QueuePair[] {loop.a.qp, loop.b.qp}) {
                qp.modify(QpAttributes.of().migrationState(MigrationState.MIGRATED));
                assertEquals(MigrationState.MIGRATED, qp.query().migrationState());
            }
            MemoryRegion src = loop.a.register(10 * MESSAGE);
            MemoryRegion inbox = postReceives(loop, 10);
            // with the primary port gone, traffic that still flows took the alternate path
            fabric.faults().ifPresent(f -> f.cutPort(device(), Loopback.PORT));
            exchange(loop, src, inbox, 0, 10);
            assertTrue(drainAsync(device()).stream().noneMatch(e -> e.type() == AsyncEventType.PATH_MIG),
                    "a migration asked for fired PATH_MIG");
        }
    }
}
