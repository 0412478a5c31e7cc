package io.rdmaactors.ffm.binding;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The inline verbs through {@link FfmContextOps} on a real device (the Soft-RoCE guest:
 * {@code MODULE=ffm native/run-in-softroce.sh}): work requests built in FFM segments from
 * {@link Structs}' layouts, posted and polled through the driver's ops pointers. Skips without a
 * device.
 */
class FfmContextOpsTest {

    private static final int WR_RDMA_WRITE = 0;
    private static final int WR_SEND = 2;
    private static final int SEND_SIGNALED = 2;
    private static final int WC_SEND = 0;
    private static final int WC_RDMA_WRITE = 1;
    private static final int WC_RECV = 128;
    private static final int EINVAL = 22;

    @BeforeEach
    void device() {
        String why = RcPair.whyUnavailable();
        assumeTrue(why == null, why);
    }

    private static void put(MemorySegment s, StructLayout layout, String path, long value) {
        long at = CLayout.offset(layout, path);
        switch ((int) CLayout.member(layout, path).byteSize()) {
            case 8 -> s.set(ValueLayout.JAVA_LONG, at, value);
            case 4 -> s.set(ValueLayout.JAVA_INT, at, (int) value);
            default -> throw new IllegalArgumentException(path);
        }
    }

    private static long get(MemorySegment s, StructLayout layout, String path) {
        long at = CLayout.offset(layout, path);
        return switch ((int) CLayout.member(layout, path).byteSize()) {
            case 8 -> s.get(ValueLayout.JAVA_LONG, at);
            case 4 -> Integer.toUnsignedLong(s.get(ValueLayout.JAVA_INT, at));
            default -> throw new IllegalArgumentException(path);
        };
    }

    /** One signaled work request of one SGE. */
    private static MemorySegment sendWr(Arena arena, long wrId, int opcode, long addr, int length, int lkey) {
        MemorySegment sge = arena.allocate(Structs.IBV_SGE);
        put(sge, Structs.IBV_SGE, "addr", addr);
        put(sge, Structs.IBV_SGE, "length", length);
        put(sge, Structs.IBV_SGE, "lkey", lkey);
        MemorySegment wr = arena.allocate(Structs.IBV_SEND_WR);
        put(wr, Structs.IBV_SEND_WR, "wr_id", wrId);
        put(wr, Structs.IBV_SEND_WR, "sg_list", sge.address());
        put(wr, Structs.IBV_SEND_WR, "num_sge", 1);
        put(wr, Structs.IBV_SEND_WR, "opcode", opcode);
        put(wr, Structs.IBV_SEND_WR, "send_flags", SEND_SIGNALED);
        return wr;
    }

    /** Polls {@code cq} until one completion lands in {@code wc}. */
    private static MemorySegment poll(FfmContextOps ops, long cq, MemorySegment wc) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            int n = ops.pollCq(cq, 1, wc.address());
            if (n != 0) {
                assertEquals(1, n, "poll_cq");
                return wc;
            }
            Thread.onSpinWait();
        }
        throw new AssertionError("no completion within 60 s");
    }

    @Test
    void aWriteAndASendPostedAndPolledThroughTheOpsLandAndComplete() throws Exception {
        try (RcPair pair = new RcPair(); Arena arena = Arena.ofConfined()) {
            FfmContextOps client = new FfmContextOps(pair.clientContext);
            FfmContextOps server = new FfmContextOps(RcPair.field(pair.serverCq, Structs.IBV_CQ, "context"));
            MemorySegment source = MemorySegment.ofAddress(pair.source.address()).reinterpret(8);
            MemorySegment target = MemorySegment.ofAddress(pair.target.address()).reinterpret(8);
            MemorySegment bad = arena.allocate(ValueLayout.JAVA_LONG);
            MemorySegment wc = arena.allocate(Structs.IBV_WC);

            source.set(ValueLayout.JAVA_LONG, 0, 0x1122334455667788L);
            MemorySegment write = sendWr(arena, 42, WR_RDMA_WRITE, pair.source.address(), 8, pair.source.lkey());
            put(write, Structs.IBV_SEND_WR, "wr.rdma.remote_addr", pair.target.address());
            put(write, Structs.IBV_SEND_WR, "wr.rdma.rkey", pair.target.rkey());
            assertEquals(0, client.postSend(pair.clientQp, write.address(), bad.address()), "post_send");
            poll(client, pair.clientCq, wc);
            assertEquals(0, get(wc, Structs.IBV_WC, "status"), "status");
            assertEquals(WC_RDMA_WRITE, get(wc, Structs.IBV_WC, "opcode"));
            assertEquals(42, get(wc, Structs.IBV_WC, "wr_id"));
            assertEquals(0x1122334455667788L, target.get(ValueLayout.JAVA_LONG, 0), "the bytes written");

            MemorySegment sge = arena.allocate(Structs.IBV_SGE);
            put(sge, Structs.IBV_SGE, "addr", pair.target.address());
            put(sge, Structs.IBV_SGE, "length", 8);
            put(sge, Structs.IBV_SGE, "lkey", pair.target.lkey());
            MemorySegment recv = arena.allocate(Structs.IBV_RECV_WR);
            put(recv, Structs.IBV_RECV_WR, "wr_id", 7);
            put(recv, Structs.IBV_RECV_WR, "sg_list", sge.address());
            put(recv, Structs.IBV_RECV_WR, "num_sge", 1);
            assertEquals(0, server.postRecv(pair.serverQp, recv.address(), bad.address()), "post_recv");
            assertEquals(0, server.reqNotifyCq(pair.serverCq, 0), "req_notify_cq");
            source.set(ValueLayout.JAVA_LONG, 0, 0x0102030405060708L);
            MemorySegment send = sendWr(arena, 43, WR_SEND, pair.source.address(), 8, pair.source.lkey());
            assertEquals(0, client.postSend(pair.clientQp, send.address(), bad.address()), "post_send");
            poll(server, pair.serverCq, wc);
            assertEquals(0, get(wc, Structs.IBV_WC, "status"), "status");
            assertEquals(WC_RECV, get(wc, Structs.IBV_WC, "opcode"));
            assertEquals(7, get(wc, Structs.IBV_WC, "wr_id"));
            assertEquals(8, get(wc, Structs.IBV_WC, "byte_len"));
            assertEquals(0x0102030405060708L, target.get(ValueLayout.JAVA_LONG, 0), "the bytes sent");
            poll(client, pair.clientCq, wc);
            assertEquals(WC_SEND, get(wc, Structs.IBV_WC, "opcode"));
            assertEquals(43, get(wc, Structs.IBV_WC, "wr_id"));
        }
    }

    /** A bad request comes back as the errno the driver returns, with bad_wr naming it: no crash. */
    @Test
    void aRequestWithTooManySgesIsRefusedWithItsErrno() throws Exception {
        try (RcPair pair = new RcPair(); Arena arena = Arena.ofConfined()) {
            FfmContextOps client = new FfmContextOps(pair.clientContext);
            MemorySegment bad = arena.allocate(ValueLayout.JAVA_LONG);
            MemorySegment wr = sendWr(arena, 1, WR_SEND, pair.source.address(), 8, pair.source.lkey());
            put(wr, Structs.IBV_SEND_WR, "num_sge", 64); // the QP takes one
            int rc = client.postSend(pair.clientQp, wr.address(), bad.address());
            assertNotEquals(0, rc, "post_send of 64 SGEs on a QP of one");
            assertEquals(EINVAL, rc);
            assertEquals(wr.address(), bad.get(ValueLayout.JAVA_LONG, 0), "bad_wr");
        }
    }
}
