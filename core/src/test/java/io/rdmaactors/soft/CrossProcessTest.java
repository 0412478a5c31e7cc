package io.rdmaactors.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

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
import io.rdmaactors.verbs.QueuePair;
import io.rdmaactors.verbs.ReceiveWorkRequest;
import io.rdmaactors.verbs.SendWorkRequest;
import io.rdmaactors.verbs.WcStatus;
import io.rdmaactors.verbs.WorkCompletion;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Two real JVM processes on the soft fabric: send/recv, RDMA write and read with every byte
 * checked, then SIGKILL of the peer: DISCONNECTED within 5 s and every outstanding work request
 * flushed back to this side. Over each transport two processes of one host may use: shared
 * memory (the default) and TCP.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CrossProcessTest {

    private static final Duration STEP = Duration.ofSeconds(10);
    private static final int MESSAGES = 10_000;
    private static final int WRITES = 1_000;
    private static final int READS = 1_000;
    private static final int CHUNK = 64;

    @ParameterizedTest(name = "transport = {0}")
    @ValueSource(strings = {"auto", "tcp"})
    void twoProcessesExchangeDataAndSurviveAKill(String transport) throws Exception {
        Process peer = new ProcessBuilder(List.of(
                javaBinary(), "-cp", System.getProperty("java.class.path"),
                "-Xmx256m", SoftPeerProcess.class.getName()))
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try (Fabric fabric = Fabric.open("soft", Map.of("transport", transport))) {
            BufferedReader out = new BufferedReader(new InputStreamReader(peer.getInputStream(), StandardCharsets.UTF_8));
            String line = out.readLine();
            assertNotNull(line, "the peer process printed no port");
            int port = Integer.parseInt(line.substring("PORT ".length()));

            EventChannel events = fabric.createEventChannel();
            CmId id = fabric.createCmId(events, PortSpace.TCP);
            id.resolveAddress(null, new InetSocketAddress("127.0.0.1", port), STEP);
            assertInstanceOf(CmEvent.AddrResolved.class, events.await(STEP));
            id.resolveRoute(STEP);
            assertInstanceOf(CmEvent.RouteResolved.class, events.await(STEP));
            ProtectionDomain pd = id.device().allocateProtectionDomain();
            CompletionQueue cq = id.device().createCompletionQueue(256, null);
            QueuePair qp = id.createQueuePair(pd, QpInitAttributes.rc(cq, 64, 64));
            MemoryRegion local = pd.register(ByteBuffer.allocateDirect(SoftPeerProcess.REGION));
            ByteBuffer mem = local.buffer();
            id.connect(ConnectionParameters.of(null));
            CmEvent.Established up = assertInstanceOf(CmEvent.Established.class, events.await(STEP));
            assertEquals(transport.equals("tcp") ? 0 : 1, ((SoftFabric) fabric).links.sharingMemory(),
                    "links through shared memory");
            ByteBuffer exported = ByteBuffer.wrap(up.privateData());
            long remoteAddress = exported.getLong();
            int rkey = exported.getInt();

            // send/recv: each message comes back as the peer's echo, byte for byte
            int recvAt = SoftPeerProcess.REGION / 2;
            for (int i = 0; i < MESSAGES; i++) {
                int len = 16 + i % 200;
                for (int b = 0; b < len; b++) {
                    mem.put(b, (byte) (i ^ b));
                }
                qp.postReceive(ReceiveWorkRequest.of(i, local.sge(recvAt, 4096)));
                qp.postSend(SendWorkRequest.send(i, local.sge(0, len)));
                WorkCompletion echo = awaitReceive(cq);
                assertEquals(i, echo.wrId());
                assertEquals(len, echo.byteLen());
                for (int b = 0; b < len; b++) {
                    if (mem.get(recvAt + b) != (byte) (i ^ b)) {
                        fail("message " + i + " byte " + b + " came back wrong");
                    }
                }
            }

            // RDMA write into the second half of the peer's region
            int writeBase = SoftPeerProcess.REGION / 2;
            for (int i = 0; i < WRITES; i++) {
                for (int b = 0; b < CHUNK; b++) {
                    mem.put(b, (byte) (i * 3 + b));
                }
                qp.postSend(SendWorkRequest.write(i, remoteAddress + writeBase + (long) i * CHUNK, rkey,
                        local.sge(0, CHUNK)));
                assertEquals(WcStatus.SUCCESS, awaitSend(cq).status());
            }
            // RDMA read of the peer's pattern from the first half
            for (int i = 0; i < READS; i++) {
                int offset = (i * 61) % (SoftPeerProcess.REGION / 2 - CHUNK);
                qp.postSend(SendWorkRequest.read(i, remoteAddress + offset, rkey, local.sge(4096, CHUNK)));
                WorkCompletion wc = awaitSend(cq);
                assertEquals(WcStatus.SUCCESS, wc.status());
                assertEquals(CHUNK, wc.byteLen());
                for (int b = 0; b < CHUNK; b++) {
                    assertEquals(SoftPeerProcess.pattern(offset + b), mem.get(4096 + b), "read " + i + " byte " + b);
                }
            }
            // and read back what was written, in one read
            qp.postSend(SendWorkRequest.read(7, remoteAddress + writeBase, rkey, local.sge(8192, WRITES * CHUNK)));
            assertEquals(WcStatus.SUCCESS, awaitSend(cq).status());
            for (int i = 0; i < WRITES; i++) {
                for (int b = 0; b < CHUNK; b++) {
                    assertEquals((byte) (i * 3 + b), mem.get(8192 + i * CHUNK + b), "write " + i + " byte " + b);
                }
            }

            // one message larger than a link's buffer each way: a 512 KiB write, read back whole;
            // twice, the second time through the buffers each link kept from the first
            int large = SoftPeerProcess.REGION / 4;
            for (int round = 0; round < 2; round++) {
                for (int b = 0; b < large; b++) {
                    mem.put(b, (byte) (b * 7 + 1 + round));
                }
                qp.postSend(SendWorkRequest.write(8, remoteAddress + writeBase, rkey, local.sge(0, large)));
                assertEquals(WcStatus.SUCCESS, awaitSend(cq).status());
                qp.postSend(SendWorkRequest.read(9, remoteAddress + writeBase, rkey, local.sge(large, large)));
                WorkCompletion whole = awaitSend(cq);
                assertEquals(WcStatus.SUCCESS, whole.status());
                assertEquals(large, whole.byteLen());
                for (int b = 0; b < large; b++) {
                    if (mem.get(large + b) != (byte) (b * 7 + 1 + round)) {
                        fail("round " + round + ": the large write read back wrong at byte " + b);
                    }
                }
            }

            // outstanding receives, then SIGKILL
            Set<Long> outstanding = new HashSet<>();
            for (long w = 100_000; w < 100_016; w++) {
                qp.postReceive(ReceiveWorkRequest.of(w, local.sge(recvAt, 4096)));
                outstanding.add(w);
            }
            peer.destroyForcibly();
            long killedAt = System.nanoTime();
            CmEvent gone = events.await(Duration.ofSeconds(5));
            assertInstanceOf(CmEvent.Disconnected.class, gone, "no DISCONNECTED within 5 s of the kill");
            assertTrue(System.nanoTime() - killedAt < TimeUnit.SECONDS.toNanos(5));
            // sends posted after the peer died can only be flushed
            for (long w = 200_000; w < 200_004; w++) {
                qp.postSend(SendWorkRequest.send(w, local.sge(0, 32)));
                outstanding.add(w);
            }
            id.disconnect();
            WorkCompletion[] wcs = new WorkCompletion[32];
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (!outstanding.isEmpty() && System.nanoTime() < deadline) {
                int n = cq.poll(wcs);
                for (int i = 0; i < n; i++) {
                    assertTrue(outstanding.remove(wcs[i].wrId()), "completion for an unknown or finished request: "
                            + wcs[i]);
                    assertTrue(wcs[i].status() == WcStatus.WR_FLUSH_ERR || wcs[i].status() == WcStatus.RETRY_EXC_ERR,
                            "outstanding requests end in error: " + wcs[i]);
                }
            }
            assertTrue(outstanding.isEmpty(), "never completed: " + outstanding);
            Thread.sleep(50);
            assertEquals(0, cq.poll(wcs), "no request completes twice");

            id.close();
            local.close();
            cq.close();
            pd.close();
            events.close();
            assertEquals(0, fabric.ledger().total(), fabric.ledger().toString());
        } finally {
            peer.destroyForcibly();
            peer.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static WorkCompletion awaitReceive(CompletionQueue cq) {
        return await(cq, true);
    }

    private static WorkCompletion awaitSend(CompletionQueue cq) {
        return await(cq, false);
    }

    /** The next completion of one queue; the other queue's successful completions are skipped. */
    private static WorkCompletion await(CompletionQueue cq, boolean receive) {
        WorkCompletion[] one = new WorkCompletion[1];
        long deadline = System.nanoTime() + STEP.toNanos();
        while (System.nanoTime() < deadline) {
            if (cq.poll(one) == 1) {
                WorkCompletion wc = one[0];
                if (!wc.isSuccess()) {
                    fail("work request failed: " + wc);
                }
                boolean isReceive = wc.opcode() == io.rdmaactors.verbs.WcOpcode.RECV;
                if (isReceive == receive) {
                    return wc;
                }
            } else {
                Thread.onSpinWait();
            }
        }
        throw new AssertionError("no completion within " + STEP);
    }

    static String javaBinary() {
        return System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
    }
}
