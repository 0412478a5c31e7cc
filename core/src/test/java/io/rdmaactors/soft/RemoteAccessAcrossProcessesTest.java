package io.rdmaactors.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaactors.cm.CmEvent;
import io.rdmaactors.verbs.CmId;
import io.rdmaactors.verbs.CompletionQueue;
import io.rdmaactors.verbs.ConnectionParameters;
import io.rdmaactors.verbs.EventChannel;
import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.PortSpace;
import io.rdmaactors.verbs.ProtectionDomain;
import io.rdmaactors.verbs.QpInitAttributes;
import io.rdmaactors.verbs.SendWorkRequest;
import io.rdmaactors.verbs.WcStatus;
import io.rdmaactors.verbs.WorkCompletion;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A client of another process uses keys and addresses it was not given rights to (a guessed
 * rkey, an address past the region, a region without the right) for READ, WRITE and atomics:
 * each fails at once with REM_ACCESS_ERR, as on rdma-core, not after the transport's retries; the
 * responder's QP is failed with QP_ACCESS_ERR, and its other connection serves on.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RemoteAccessAcrossProcessesTest {

    private static final Duration STEP = Duration.ofSeconds(10);
    /** Far below the 0.5 s times 7 retries a lost NAK costs, far above a NAK's trip on a busy machine. */
    private static final Duration AT_ONCE = Duration.ofSeconds(1);

    enum Op { READ, WRITE, ATOMIC }

    enum Violation { GUESSED_RKEY, PAST_THE_REGION, WITHOUT_THE_RIGHT }

    /** One connection to the peer: its id, CQ and the regions the peer handed over. */
    private record Connection(CmId id, CompletionQueue cq, long open, int openKey, int openLength, long closed,
                              int closedKey) {
    }

    @Test
    void remoteAccessViolationsFailAtOnceAndTheResponderServesOn() throws Exception {
        Process peer = new ProcessBuilder(List.of(CrossProcessTest.javaBinary(), "-cp",
                System.getProperty("java.class.path"), "-Xmx128m", SoftAccessPeerProcess.class.getName()))
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        BlockingQueue<String> said = new LinkedBlockingQueue<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader out = new BufferedReader(new InputStreamReader(peer.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line; (line = out.readLine()) != null; ) {
                    said.add(line);
                }
            } catch (Exception e) {
                said.add("READ-FAILED " + e);
            }
        });
        reader.setDaemon(true);
        reader.start();
        try (Fabric fabric = Fabric.open("soft")) {
            String first = said.poll(STEP.toSeconds(), TimeUnit.SECONDS);
            assertNotNull(first, "the peer process printed no port");
            int port = Integer.parseInt(first.substring("PORT ".length()));
            ProtectionDomain pd = fabric.devices().get(0).allocateProtectionDomain();
            MemoryRegion local = pd.register(ByteBuffer.allocateDirect(4096));
            List<AutoCloseable> opened = new ArrayList<>();

            Connection healthy = connect(fabric, pd, port, opened);
            for (Op op : Op.values()) {
                for (Violation violation : Violation.values()) {
                    String what = op + " " + violation;
                    Connection attacker = connect(fabric, pd, port, opened);
                    long started = System.nanoTime();
                    attacker.id().queuePair().postSend(request(op, violation, attacker, local));
                    WorkCompletion wc = poll(attacker.cq());
                    long tookNanos = System.nanoTime() - started;
                    assertEquals(WcStatus.REM_ACCESS_ERR, wc.status(), what);
                    assertTrue(tookNanos < AT_ONCE.toNanos(), what + " took " + tookNanos / 1_000_000 + " ms");
                    int responderQp = attacker.id().queuePair().query().destQpNum();
                    assertEquals("ASYNC QP_ACCESS_ERR " + responderQp, said.poll(STEP.toSeconds(), TimeUnit.SECONDS),
                            what + ": the responder's QP is failed for it");

                    healthy.id().queuePair().postSend(SendWorkRequest.read(1, healthy.open() + 100, healthy.openKey(),
                            local.sge(0, 64)));
                    WorkCompletion read = poll(healthy.cq());
                    assertEquals(WcStatus.SUCCESS, read.status(), what + ": the other connection still reads");
                    for (int b = 0; b < 64; b++) {
                        assertEquals(SoftAccessPeerProcess.pattern(100 + b), local.buffer().get(b), what + " byte " + b);
                    }
                    attacker.id().disconnect();
                    assertInstanceOf(CmEvent.Disconnected.class, attacker.id().channel().await(STEP), what);
                }
            }
            for (int i = opened.size() - 1; i >= 0; i--) {
                opened.get(i).close();
            }
            local.close();
            pd.close();
            assertEquals(0, fabric.ledger().total(), fabric.ledger().toString());
        } finally {
            peer.destroyForcibly();
            peer.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static SendWorkRequest request(Op op, Violation violation, Connection c, MemoryRegion local) {
        int length = op == Op.ATOMIC ? 8 : 64;
        long address = switch (violation) {
            case GUESSED_RKEY -> c.open();
            case PAST_THE_REGION -> c.open() + c.openLength() - length + 8;
            case WITHOUT_THE_RIGHT -> c.closed();
        };
        int rkey = switch (violation) {
            case GUESSED_RKEY -> c.openKey() ^ 0x5a5a00;
            case PAST_THE_REGION -> c.openKey();
            case WITHOUT_THE_RIGHT -> c.closedKey();
        };
        return switch (op) {
            case READ -> SendWorkRequest.read(7, address, rkey, local.sge(0, length));
            case WRITE -> SendWorkRequest.write(7, address, rkey, local.sge(0, length));
            case ATOMIC -> SendWorkRequest.fetchAdd(7, address, rkey, 1, local.sge(0, length));
        };
    }

    private static Connection connect(Fabric fabric, ProtectionDomain pd, int port, List<AutoCloseable> opened)
            throws Exception {
        EventChannel events = opened(opened, fabric.createEventChannel());
        CmId id = fabric.createCmId(events, PortSpace.TCP);
        id.resolveAddress(null, new InetSocketAddress("127.0.0.1", port), STEP);
        assertInstanceOf(CmEvent.AddrResolved.class, events.await(STEP));
        id.resolveRoute(STEP);
        assertInstanceOf(CmEvent.RouteResolved.class, events.await(STEP));
        CompletionQueue cq = opened(opened, id.device().createCompletionQueue(16, null));
        id.createQueuePair(pd, QpInitAttributes.rc(cq, 4, 4));
        opened(opened, id);
        id.connect(ConnectionParameters.of(null));
        CmEvent.Established up = assertInstanceOf(CmEvent.Established.class, events.await(STEP));
        ByteBuffer keys = ByteBuffer.wrap(up.privateData());
        return new Connection(id, cq, keys.getLong(), keys.getInt(), keys.getInt(), keys.getLong(), keys.getInt());
    }

    private static <T extends AutoCloseable> T opened(List<AutoCloseable> opened, T resource) {
        opened.add(resource);
        return resource;
    }

    private static WorkCompletion poll(CompletionQueue cq) {
        WorkCompletion[] one = new WorkCompletion[1];
        long deadline = System.nanoTime() + STEP.toNanos();
        while (cq.poll(one) == 0) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no completion within " + STEP);
            }
            Thread.onSpinWait();
        }
        return one[0];
    }
}
