package io.rdmaactors.soft;

import io.rdmaactors.cm.AsyncEvent;
import io.rdmaactors.cm.CmEvent;
import io.rdmaactors.verbs.Access;
import io.rdmaactors.verbs.CmId;
import io.rdmaactors.verbs.CompletionQueue;
import io.rdmaactors.verbs.ConnectionParameters;
import io.rdmaactors.verbs.Device;
import io.rdmaactors.verbs.EventChannel;
import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.PortSpace;
import io.rdmaactors.verbs.ProtectionDomain;
import io.rdmaactors.verbs.QpInitAttributes;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.EnumSet;

/**
 * The responder of {@link RemoteAccessAcrossProcessesTest}: listens on the soft fabric and accepts
 * every connection into one PD that holds two regions, one with every remote right and one with
 * none, handing both keys to each peer (as a careless or compromised service might). It prints
 * each async event of its device, so the test sees which QP the fabric failed, until it is killed.
 */
public final class SoftAccessPeerProcess {

    static final int REGION = 4096;

    /** The byte the peer stores at {@code offset} of the open region. */
    static byte pattern(int offset) {
        return (byte) (offset * 13 + 5);
    }

    public static void main(String[] args) throws Exception {
        Fabric fabric = Fabric.open("soft");
        Device device = fabric.devices().get(0);
        EventChannel events = fabric.createEventChannel();
        CmId listener = fabric.createCmId(events, PortSpace.TCP);
        listener.bind(new InetSocketAddress("127.0.0.1", 0));
        listener.listen(16);
        ProtectionDomain pd = device.allocateProtectionDomain();
        CompletionQueue cq = device.createCompletionQueue(256, null);
        MemoryRegion open = pd.register(ByteBuffer.allocateDirect(REGION),
                EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ, Access.REMOTE_WRITE, Access.REMOTE_ATOMIC));
        for (int i = 0; i < REGION; i++) {
            open.buffer().put(i, pattern(i));
        }
        MemoryRegion closed = pd.register(ByteBuffer.allocateDirect(REGION), EnumSet.of(Access.LOCAL_WRITE));
        byte[] keys = ByteBuffer.allocate(32).putLong(open.address()).putInt(open.rkey()).putInt(open.length())
                .putLong(closed.address()).putInt(closed.rkey()).putInt(closed.length()).array();
        Thread asyncEvents = new Thread(() -> {
            try {
                while (true) {
                    AsyncEvent e = device.asyncEvents().await(Duration.ofSeconds(1));
                    if (e instanceof AsyncEvent.QpEvent qp) {
                        say("ASYNC " + qp.type() + " " + qp.qpNum());
                    }
                }
            } catch (Exception e) {
                say("ASYNC-FAILED " + e);
            }
        }, "async-events");
        asyncEvents.setDaemon(true);
        asyncEvents.start();
        say("PORT " + listener.localAddress().getPort());

        while (true) {
            CmEvent event = events.await(Duration.ofSeconds(60));
            if (event instanceof CmEvent.ConnectRequest request) {
                CmId id = events.cmId(request.id());
                id.createQueuePair(pd, QpInitAttributes.rc(cq, 16, 16));
                id.accept(ConnectionParameters.of(keys));
            } else if (event instanceof CmEvent.Disconnected gone) {
                CmId id = events.cmId(gone.id());
                if (id != null) {
                    id.disconnect();
                }
            }
        }
    }

    private static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }
}
