package io.rdmaactors.soft;

import io.rdmaactors.cm.CmEvent;
import io.rdmaactors.verbs.Access;
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
import io.rdmaactors.verbs.WcOpcode;
import io.rdmaactors.verbs.WorkCompletion;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.EnumSet;

/**
 * The other process of {@link CrossProcessTest}: listens on the soft fabric, exports a region the
 * client may read and write, and echoes every message it receives, until it is killed.
 */
public final class SoftPeerProcess {

    /** 2 MiB: room for a message larger than a TCP link's 256 KiB buffer. */
    static final int REGION = 1 << 21;
    static final int SLOT = 4096;
    static final int SLOTS = 32;

    /** The byte the peer stores at {@code offset} of the region's first half. */
    static byte pattern(int offset) {
        return (byte) (offset * 31 + 7);
    }

    public static void main(String[] args) throws Exception {
        Fabric fabric = Fabric.open("soft");
        EventChannel events = fabric.createEventChannel();
        CmId listener = fabric.createCmId(events, PortSpace.TCP);
        listener.bind(new InetSocketAddress("127.0.0.1", 0));
        listener.listen(1);
        System.out.println("PORT " + listener.localAddress().getPort());
        System.out.flush();

        CmEvent event = events.await(Duration.ofSeconds(30));
        if (!(event instanceof CmEvent.ConnectRequest request)) {
            throw new IllegalStateException("expected a connect request, got " + event);
        }
        CmId id = events.cmId(request.id());
        ProtectionDomain pd = id.device().allocateProtectionDomain();
        CompletionQueue cq = id.device().createCompletionQueue(4 * SLOTS, null);
        QueuePair qp = id.createQueuePair(pd, QpInitAttributes.rc(cq, SLOTS, SLOTS));
        MemoryRegion region = pd.register(ByteBuffer.allocateDirect(REGION),
                EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ, Access.REMOTE_WRITE));
        ByteBuffer memory = region.buffer();
        for (int i = 0; i < REGION / 2; i++) {
            memory.put(i, pattern(i));
        }
        MemoryRegion slots = pd.register(ByteBuffer.allocateDirect(2 * SLOTS * SLOT));
        for (int s = 0; s < SLOTS; s++) {
            qp.postReceive(ReceiveWorkRequest.of(s, slots.sge(s * SLOT, SLOT)));
        }
        byte[] exported = ByteBuffer.allocate(16).putLong(region.address()).putInt(region.rkey())
                .putInt(region.length()).array();
        id.accept(ConnectionParameters.of(exported));

        WorkCompletion[] wcs = new WorkCompletion[16];
        ByteBuffer slotMemory = slots.buffer();
        while (true) {
            int n = cq.poll(wcs);
            if (n == 0) {
                Thread.onSpinWait();
                continue;
            }
            for (int i = 0; i < n; i++) {
                WorkCompletion wc = wcs[i];
                if (!wc.isSuccess() || wc.opcode() != WcOpcode.RECV) {
                    continue;
                }
                int s = (int) wc.wrId();
                int echo = (SLOTS + s) * SLOT;
                for (int b = 0; b < wc.byteLen(); b++) {
                    slotMemory.put(echo + b, slotMemory.get(s * SLOT + b));
                }
                qp.postSend(SendWorkRequest.send(SLOTS + s, slots.sge(echo, wc.byteLen())));
                qp.postReceive(ReceiveWorkRequest.of(s, slots.sge(s * SLOT, SLOT)));
            }
        }
    }
}
