package io.rdmaactors.jna;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import io.rdmaactors.jna.binding.IbvRecvWr;
import io.rdmaactors.jna.binding.IbvSendWr;
import io.rdmaactors.jna.binding.IbvSge;
import io.rdmaactors.verbs.Access;
import io.rdmaactors.verbs.InvalidRequestException;
import io.rdmaactors.verbs.ReceiveWorkRequest;
import io.rdmaactors.verbs.ScatterGatherElement;
import io.rdmaactors.verbs.SendFlag;
import io.rdmaactors.verbs.SendOpcode;
import io.rdmaactors.verbs.SendWorkRequest;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;

/**
 * A linked list of {@code ibv_send_wr} or {@code ibv_recv_wr} with their SGEs, written into reusable
 * native memory through a direct-buffer view (no per-field native call). The owner serialises use.
 */
final class WorkRequestList {

    /** Where rdma-core writes the failed work request ({@code bad_wr}); the list follows it. */
    private static final int BAD_WR = 0;
    private static final int FIRST = 8;

    private Memory memory;
    private ByteBuffer view;
    private long base;

    long badWrAddress() {
        return base + BAD_WR;
    }

    long firstAddress() {
        return base + FIRST;
    }

    /** The index of the request rdma-core named in {@code bad_wr}. */
    int failedIndex(int wrSize) {
        long bad = view.getLong(BAD_WR);
        return bad == 0 ? 0 : (int) ((bad - firstAddress()) / wrSize);
    }

    private void reserve(long bytes) {
        if (memory == null || memory.size() < bytes) {
            memory = new Memory(Math.max(bytes, 1024));
            base = Pointer.nativeValue(memory);
            view = memory.getByteBuffer(0, memory.size()).order(ByteOrder.nativeOrder());
        }
        memory.clear(bytes);
    }

    void writeSends(SendWorkRequest[] requests, boolean ud) {
        int sges = 0;
        for (SendWorkRequest r : requests) {
            sges += r.sgList().size();
        }
        long sgeBase = FIRST + (long) requests.length * IbvSendWr.SIZE;
        reserve(sgeBase + (long) sges * IbvSge.SIZE);
        int sge = (int) sgeBase;
        for (int i = 0; i < requests.length; i++) {
            SendWorkRequest r = requests[i];
            int at = FIRST + i * IbvSendWr.SIZE;
            view.putLong(at + IbvSendWr.WR_ID, r.wrId());
            if (i + 1 < requests.length) {
                view.putLong(at + IbvSendWr.NEXT, base + at + IbvSendWr.SIZE);
            }
            view.putLong(at + IbvSendWr.SG_LIST, r.sgList().isEmpty() ? 0 : base + sge);
            view.putInt(at + IbvSendWr.NUM_SGE, r.sgList().size());
            view.putInt(at + IbvSendWr.OPCODE, r.opcode().code());
            int flags = 0;
            for (SendFlag f : r.flags()) {
                flags |= f.bit();
            }
            view.putInt(at + IbvSendWr.SEND_FLAGS, flags);
            if (r.opcode().hasImmediate()) {
                view.putInt(at + IbvSendWr.IMM_DATA, Integer.reverseBytes(r.immData()));
            } else if (r.opcode() == SendOpcode.LOCAL_INV) {
                view.putInt(at + IbvSendWr.IMM_DATA, r.rkey()); // invalidate_rkey shares imm_data's place, host order
            } else if (r.opcode() == SendOpcode.BIND_MW) {
                SendWorkRequest.WindowBind bind = r.bind();
                view.putLong(at + IbvSendWr.BIND_MW, JnaMemoryWindow.of(bind.window()).pointer);
                view.putInt(at + IbvSendWr.BIND_RKEY, bind.rkey());
                view.putLong(at + IbvSendWr.BIND_MR, JnaMemoryRegion.of(bind.region()).pointer);
                view.putLong(at + IbvSendWr.BIND_ADDR, bind.address());
                view.putLong(at + IbvSendWr.BIND_LENGTH, bind.length());
                view.putInt(at + IbvSendWr.BIND_ACCESS, Access.mask(bind.access()));
            }
            if (r.opcode().isAtomic()) {
                view.putLong(at + IbvSendWr.ATOMIC_REMOTE_ADDR, r.remoteAddress());
                view.putLong(at + IbvSendWr.ATOMIC_COMPARE_ADD, r.compareAdd());
                view.putLong(at + IbvSendWr.ATOMIC_SWAP, r.swap());
                view.putInt(at + IbvSendWr.ATOMIC_RKEY, r.rkey());
            } else if (r.opcode().isRemoteAccess()) {
                view.putLong(at + IbvSendWr.RDMA_REMOTE_ADDR, r.remoteAddress());
                view.putInt(at + IbvSendWr.RDMA_RKEY, r.rkey());
            }
            if (ud) {
                if (r.destination() == null) {
                    throw new InvalidRequestException("ibv_post_send", "a UD send needs a destination");
                }
                view.putLong(at + IbvSendWr.UD_AH, JnaAddressHandle.of(r.destination().addressHandle()).pointer);
                view.putInt(at + IbvSendWr.UD_REMOTE_QPN, r.destination().remoteQpn());
                view.putInt(at + IbvSendWr.UD_REMOTE_QKEY, r.destination().remoteQkey());
            }
            sge = writeSges(r.sgList(), sge);
        }
    }

    void writeReceives(ReceiveWorkRequest[] requests) {
        int sges = 0;
        for (ReceiveWorkRequest r : requests) {
            sges += r.sgList().size();
        }
        long sgeBase = FIRST + (long) requests.length * IbvRecvWr.SIZE;
        reserve(sgeBase + (long) sges * IbvSge.SIZE);
        int sge = (int) sgeBase;
        for (int i = 0; i < requests.length; i++) {
            ReceiveWorkRequest r = requests[i];
            int at = FIRST + i * IbvRecvWr.SIZE;
            view.putLong(at + IbvRecvWr.WR_ID, r.wrId());
            if (i + 1 < requests.length) {
                view.putLong(at + IbvRecvWr.NEXT, base + at + IbvRecvWr.SIZE);
            }
            view.putLong(at + IbvRecvWr.SG_LIST, r.sgList().isEmpty() ? 0 : base + sge);
            view.putInt(at + IbvRecvWr.NUM_SGE, r.sgList().size());
            sge = writeSges(r.sgList(), sge);
        }
    }

    private int writeSges(List<ScatterGatherElement> list, int at) {
        for (ScatterGatherElement s : list) {
            view.putLong(at + IbvSge.ADDR, s.address());
            view.putInt(at + IbvSge.LENGTH, s.length());
            view.putInt(at + IbvSge.LKEY, s.lkey());
            at += IbvSge.SIZE;
        }
        return at;
    }
}
