package io.rdmaactors.conformance;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaactors.verbs.Access;
import io.rdmaactors.verbs.InvalidRequestException;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.ReceiveWorkRequest;
import io.rdmaactors.verbs.SendFlag;
import io.rdmaactors.verbs.SendWorkRequest;
import io.rdmaactors.verbs.WcOpcode;
import io.rdmaactors.verbs.WorkCompletion;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

/** RC operations that succeed: what lands where, and what each side's completion says. */
public abstract class RcDataPathConformance extends FabricConformance {

    private static final byte UNTOUCHED = 0x55;

    private static ByteBuffer filled(int length) {
        ByteBuffer b = ByteBuffer.allocateDirect(length);
        for (int i = 0; i < length; i++) {
            b.put(i, UNTOUCHED);
        }
        return b;
    }

    private static long word(MemoryRegion mr, int offset) {
        return mr.buffer().order(ByteOrder.nativeOrder()).getLong(offset);
    }

    private static void setWord(MemoryRegion mr, int offset, long value) {
        mr.buffer().order(ByteOrder.nativeOrder()).putLong(offset, value);
    }

    @Test
    void sendLandsInThePostedReceive() {
        try (Loopback loop = loopback().open()) {
            MemoryRegion src = loop.a.register(pattern(32, 1));
            MemoryRegion inbox = loop.b.register(filled(64));
            loop.b.qp.postReceive(ReceiveWorkRequest.of(10, inbox.sge()));
            loop.a.qp.postSend(SendWorkRequest.send(20, src.sge()));

            WorkCompletion recv = pollSuccess(loop.b.cq, 10);
            assertEquals(WcOpcode.RECV, recv.opcode());
            assertEquals(32, recv.byteLen());
            assertEquals(loop.b.qp.qpNum(), recv.qpNum());
            assertFalse(recv.hasImmediate());
            WorkCompletion send = pollSuccess(loop.a.cq, 20);
            assertEquals(WcOpcode.SEND, send.opcode());
            assertEquals(loop.a.qp.qpNum(), send.qpNum());
            assertArrayEquals(patternBytes(32, 1), bytes(inbox.buffer(), 0, 32));
            assertEquals(UNTOUCHED, inbox.buffer().get(32), "bytes past the message were written");
        }
    }

    @Test
    void sendsArriveInOrderInTheReceivesInOrder() {
        try (Loopback loop = loopback().open()) {
            MemoryRegion src = loop.a.register(48);
            for (int i = 0; i < 3; i++) {
                src.buffer().put(i * 16, patternBytes(16, 10 * i));
            }
            MemoryRegion inbox = loop.b.register(48);
            for (int i = 0; i < 3; i++) {
                loop.b.qp.postReceive(ReceiveWorkRequest.of(i, inbox.sge(i * 16, 16)));
            }
            for (int i = 0; i < 3; i++) {
                loop.a.qp.postSend(SendWorkRequest.send(100 + i, src.sge(i * 16, 16)));
            }
            for (int i = 0; i < 3; i++) {
                pollSuccess(loop.b.cq, i);
                pollSuccess(loop.a.cq, 100 + i);
                assertArrayEquals(patternBytes(16, 10 * i), bytes(inbox.buffer(), i * 16, 16), "message " + i);
            }
        }
    }

    @Test
    void sendWithImmediateCarriesTheImmediate() {
        try (Loopback loop = loopback().open()) {
            MemoryRegion src = loop.a.register(pattern(16, 2));
            MemoryRegion inbox = loop.b.register(16);
            loop.b.qp.postReceive(ReceiveWorkRequest.of(1, inbox.sge()));
            loop.a.qp.postSend(SendWorkRequest.sendWithImmediate(2, 0xCAFEBABE, src.sge()));
            WorkCompletion recv = pollSuccess(loop.b.cq, 1);
            assertEquals(WcOpcode.RECV, recv.opcode());
            assertTrue(recv.hasImmediate(), "WITH_IMM flag");
            assertEquals(0xCAFEBABE, recv.immData());
            assertEquals(16, recv.byteLen());
            assertArrayEquals(patternBytes(16, 2), bytes(inbox.buffer(), 0, 16));
            assertEquals(WcOpcode.SEND, pollSuccess(loop.a.cq, 2).opcode());
        }
    }

    @Test
    void rdmaWriteLandsAtTheRemoteAddressWithoutAReceive() {
        try (Loopback loop = loopback().open()) {
            MemoryRegion src = loop.a.register(pattern(16, 3));
            MemoryRegion dst = loop.b.register(filled(64), Access.LOCAL_WRITE, Access.REMOTE_WRITE);
            loop.a.qp.postSend(SendWorkRequest.write(5, dst.address(8), dst.rkey(), src.sge()));
            assertEquals(WcOpcode.RDMA_WRITE, pollSuccess(loop.a.cq, 5).opcode());
            assertArrayEquals(patternBytes(16, 3), bytes(dst.buffer(), 8, 16));
            assertEquals(UNTOUCHED, dst.buffer().get(7));
            assertEquals(UNTOUCHED, dst.buffer().get(24));
            assertNoCompletion(loop.b.cq);
        }
    }

    @Test
    void writeWithImmediateConsumesAReceiveButNotItsBuffer() {
        try (Loopback loop = loopback().open()) {
            MemoryRegion src = loop.a.register(pattern(16, 4));
            MemoryRegion dst = loop.b.register(filled(32), Access.LOCAL_WRITE, Access.REMOTE_WRITE);
            MemoryRegion inbox = loop.b.register(filled(16));
            loop.b.qp.postReceive(ReceiveWorkRequest.of(7, inbox.sge()));
            loop.a.qp.postSend(SendWorkRequest.writeWithImmediate(8, 0x1234, dst.address(4), dst.rkey(), src.sge()));
            WorkCompletion recv = pollSuccess(loop.b.cq, 7);
            assertEquals(WcOpcode.RECV_RDMA_WITH_IMM, recv.opcode());
            assertTrue(recv.hasImmediate());
            assertEquals(0x1234, recv.immData());
            // as rdma-core reports it: the length of the write, though no byte went to the receive's buffer
            assertEquals(16, recv.byteLen());
            assertEquals(WcOpcode.RDMA_WRITE, pollSuccess(loop.a.cq, 8).opcode());
            assertArrayEquals(patternBytes(16, 4), bytes(dst.buffer(), 4, 16));
            assertArrayEquals(bytes(filled(16), 0, 16), bytes(inbox.buffer(), 0, 16), "the receive buffer was written");
        }
    }

    @Test
    void rdmaReadFetchesTheRemoteBytes() {
        try (Loopback loop = loopback().open()) {
            MemoryRegion remote = loop.b.register(pattern(64, 5), Access.REMOTE_READ);
            MemoryRegion local = loop.a.register(filled(32));
            loop.a.qp.postSend(SendWorkRequest.read(9, remote.address(16), remote.rkey(), local.sge(0, 24)));
            WorkCompletion wc = pollSuccess(loop.a.cq, 9);
            assertEquals(WcOpcode.RDMA_READ, wc.opcode());
            assertEquals(24, wc.byteLen());
            assertArrayEquals(bytes(pattern(64, 5), 16, 24), bytes(local.buffer(), 0, 24));
            assertEquals(UNTOUCHED, local.buffer().get(24));
            assertNoCompletion(loop.b.cq);
        }
    }

    @Test
    void fetchAndAddReturnsTheOldValueAndAdds() {
        try (Loopback loop = loopback().open()) {
            MemoryRegion remote = loop.b.register(16, Access.LOCAL_WRITE, Access.REMOTE_ATOMIC);
            setWord(remote, 8, 40);
            MemoryRegion result = loop.a.register(8);
            loop.a.qp.postSend(SendWorkRequest.fetchAdd(1, remote.address(8), remote.rkey(), 2, result.sge()));
            assertEquals(WcOpcode.FETCH_ADD, pollSuccess(loop.a.cq, 1).opcode());
            assertEquals(40, word(result, 0));
            assertEquals(42, word(remote, 8));
            assertEquals(0, word(remote, 0), "the neighbouring word changed");
        }
    }

    @Test
    void compareAndSwapSwapsOnlyOnAMatch() {
        try (Loopback loop = loopback().open()) {
            MemoryRegion remote = loop.b.register(8, Access.LOCAL_WRITE, Access.REMOTE_ATOMIC);
            setWord(remote, 0, 5);
            MemoryRegion result = loop.a.register(8);
            loop.a.qp.postSend(SendWorkRequest.compareSwap(1, remote.address(), remote.rkey(), 6, 9, result.sge()));
            assertEquals(WcOpcode.COMP_SWAP, pollSuccess(loop.a.cq, 1).opcode());
            assertEquals(5, word(result, 0), "a miss returns the current value");
            assertEquals(5, word(remote, 0), "a miss swapped");

            loop.a.qp.postSend(SendWorkRequest.compareSwap(2, remote.address(), remote.rkey(), 5, 9, result.sge()));
            assertEquals(WcOpcode.COMP_SWAP, pollSuccess(loop.a.cq, 2).opcode());
            assertEquals(5, word(result, 0), "a hit returns the old value");
            assertEquals(9, word(remote, 0), "a hit did not swap");
        }
    }

    @Test
    void inlineSendCopiesAtPostTime() {
        try (Loopback loop = loopback().open()) {
            int size = Math.min(32, loop.a.qp.initAttributes().maxInlineData());
            MemoryRegion src = loop.a.register(pattern(size, 6));
            MemoryRegion inbox = loop.b.register(64);
            loop.b.qp.postReceive(ReceiveWorkRequest.of(1, inbox.sge()));
            loop.a.qp.postSend(SendWorkRequest.send(2, src.sge()).with(SendFlag.INLINE));
            // the buffer is the caller's again as soon as the post returns
            src.buffer().put(0, new byte[size]);
            assertEquals(size, pollSuccess(loop.b.cq, 1).byteLen());
            pollSuccess(loop.a.cq, 2);
            assertArrayEquals(patternBytes(size, 6), bytes(inbox.buffer(), 0, size));
        }
    }

    @Test
    void inlineOverTheQpLimitIsRefused() {
        try (Loopback loop = loopback().open()) {
            int max = loop.a.qp.initAttributes().maxInlineData();
            MemoryRegion src = loop.a.register(max + 1);
            MemoryRegion inbox = loop.b.register(max + 1);
            loop.b.qp.postReceive(ReceiveWorkRequest.of(1, inbox.sge()));
            assertRefused(InvalidRequestException.class, 0,
                    () -> loop.a.qp.postSend(SendWorkRequest.send(2, src.sge()).with(SendFlag.INLINE)));
            assertNoCompletion(loop.a.cq);
            assertNoCompletion(loop.b.cq);
            // the refusal did not hurt the QP
            loop.a.qp.postSend(SendWorkRequest.send(3, src.sge()));
            pollSuccess(loop.b.cq, 1);
            pollSuccess(loop.a.cq, 3);
        }
    }

    @Test
    void unsignaledSendsCompleteSilentlyAndASignaledOneStillCompletes() {
        try (Loopback loop = loopback().open()) {
            MemoryRegion src = loop.a.register(pattern(8, 7));
            MemoryRegion inbox = loop.b.register(32);
            for (int i = 0; i < 4; i++) {
                loop.b.qp.postReceive(ReceiveWorkRequest.of(i, inbox.sge(i * 8, 8)));
            }
            for (int i = 0; i < 3; i++) {
                loop.a.qp.postSend(SendWorkRequest.send(10 + i, src.sge()).unsignaled());
            }
            for (int i = 0; i < 3; i++) {
                pollSuccess(loop.b.cq, i);
            }
            assertNoCompletion(loop.a.cq);
            loop.a.qp.postSend(SendWorkRequest.send(13, src.sge()));
            pollSuccess(loop.b.cq, 3);
            pollSuccess(loop.a.cq, 13);
            assertNoCompletion(loop.a.cq);
            for (int i = 0; i < 4; i++) {
                assertArrayEquals(patternBytes(8, 7), bytes(inbox.buffer(), i * 8, 8), "message " + i);
            }
        }
    }
}
