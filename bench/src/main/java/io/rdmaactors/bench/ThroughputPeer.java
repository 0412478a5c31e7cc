package io.rdmaactors.bench;

import io.rdmaactors.cm.CmEvent;
import io.rdmaactors.verbs.Access;
import io.rdmaactors.verbs.CmId;
import io.rdmaactors.verbs.CompletionChannel;
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
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The child process of {@link CrossProcessThroughput}: a sink for both transports. It listens on
 * the soft fabric (CM on 127.0.0.1, port 0) and on a plain {@link ServerSocket} (127.0.0.1, port
 * 0), prints {@code PORTS <soft> <tcp>}, and serves one connection of each:
 *
 * <ul>
 *   <li>soft: exports a ring of {@link CrossProcessThroughput#RING} 64 KiB slots the client RDMA
 *       WRITEs into; keeps control receives posted; on an END message checks the stamps of the
 *       last messages written and answers with a SEND; on QUIT disconnects and closes everything.
 *   <li>socket: per round reads an 8-byte message count, then that many 64 KiB messages (checking
 *       each one's stamps), and answers with 8 bytes; a count of 0 ends the connection.
 * </ul>
 *
 * At the end it prints {@code LEDGER <fabric.ledger().total()>} and exits (status 0 when every
 * check passed and nothing leaked). A watchdog ends it if the parent goes away.
 */
public final class ThroughputPeer {

    private static final Duration STEP = Duration.ofSeconds(30);
    private static final long WATCHDOG_SECONDS = 150;

    private ThroughputPeer() {
    }

    public static void main(String[] args) throws Exception {
        Thread watchdog = new Thread(() -> {
            try {
                Thread.sleep(TimeUnit.SECONDS.toMillis(WATCHDOG_SECONDS));
                System.err.println("ThroughputPeer: still running after " + WATCHDOG_SECONDS + " s, exiting");
                System.exit(3);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "peer-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();

        boolean ok;
        long ledger;
        AtomicReference<Throwable> socketFailure = new AtomicReference<>();
        try (Fabric fabric = Fabric.open("soft");
             ServerSocket server = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            EventChannel events = fabric.createEventChannel();
            CmId listener = fabric.createCmId(events, PortSpace.TCP);
            listener.bind(new InetSocketAddress("127.0.0.1", 0));
            listener.listen(1);
            System.out.println("PORTS " + listener.localAddress().getPort() + " " + server.getLocalPort());
            System.out.flush();

            server.setSoTimeout((int) STEP.toMillis());
            Thread socketSink = new Thread(() -> {
                try (Socket socket = server.accept()) {
                    socketSink(socket);
                } catch (Throwable t) {
                    socketFailure.set(t);
                }
            }, "socket-sink");
            socketSink.start();

            ok = softSink(events);
            listener.close();
            events.close();
            socketSink.join(TimeUnit.SECONDS.toMillis(30));
            if (socketFailure.get() != null) {
                System.err.println("ThroughputPeer: socket sink failed: " + socketFailure.get());
                ok = false;
            }
            ledger = fabric.ledger().total();
            System.out.println("LEDGER " + ledger);
            System.out.flush();
        }
        System.exit(ok && ledger == 0 ? 0 : 1);
    }

    /** Serves the soft connection until QUIT; true when every END checked out. */
    private static boolean softSink(EventChannel events) throws Exception {
        CmEvent.ConnectRequest request = BenchSupport.expect(events, CmEvent.ConnectRequest.class, STEP);
        CmId id = events.cmId(request.id());
        ProtectionDomain pd = id.device().allocateProtectionDomain();
        CompletionChannel channel = id.device().createCompletionChannel();
        CompletionQueue cq = id.device().createCompletionQueue(64, channel);
        QueuePair qp = id.createQueuePair(pd, QpInitAttributes.rc(cq, 8, CrossProcessThroughput.CONTROL_SLOTS));
        int ringBytes = CrossProcessThroughput.RING * CrossProcessThroughput.MESSAGE;
        MemoryRegion ring = pd.register(ByteBuffer.allocateDirect(ringBytes),
                EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
        int controlSlots = CrossProcessThroughput.CONTROL_SLOTS;
        MemoryRegion control = pd.register(
                ByteBuffer.allocateDirect((controlSlots + 1) * CrossProcessThroughput.CONTROL));
        ReceiveWorkRequest[] receives = new ReceiveWorkRequest[controlSlots];
        for (int s = 0; s < controlSlots; s++) {
            receives[s] = ReceiveWorkRequest.of(s, control.sge(s * CrossProcessThroughput.CONTROL,
                    CrossProcessThroughput.CONTROL));
        }
        qp.postReceive(receives);
        byte[] exported = ByteBuffer.allocate(16).putLong(ring.address()).putInt(ring.rkey()).putInt(ringBytes)
                .array();
        id.accept(ConnectionParameters.of(exported));
        BenchSupport.expect(events, CmEvent.Established.class, STEP);

        ByteBuffer ringMemory = ring.buffer();
        ByteBuffer controlMemory = control.buffer();
        int replyAt = controlSlots * CrossProcessThroughput.CONTROL;
        SendWorkRequest reply = SendWorkRequest.send(-1, control.sge(replyAt, CrossProcessThroughput.CONTROL));
        WorkCompletion[] wcs = new WorkCompletion[16];
        boolean ok = true;
        boolean quit = false;
        while (!quit) {
            int n = CrossProcessThroughput.pollOrWait(cq, channel, wcs, Long.MAX_VALUE);
            for (int i = 0; i < n && !quit; i++) {
                WorkCompletion wc = wcs[i];
                if (!wc.isSuccess()) {
                    throw new IllegalStateException("sink work request failed: " + wc);
                }
                if (wc.opcode() != WcOpcode.RECV) {
                    continue; // a reply's completion
                }
                int slot = (int) wc.wrId();
                int at = slot * CrossProcessThroughput.CONTROL;
                int type = controlMemory.getInt(at);
                if (type == CrossProcessThroughput.QUIT) {
                    quit = true;
                    break;
                }
                if (type != CrossProcessThroughput.END) {
                    throw new IllegalStateException("unknown control message " + type);
                }
                long count = controlMemory.getLong(at + 8);
                long last = controlMemory.getLong(at + 16);
                long bad = -1;
                long from = Math.max(last - count + 1, last - CrossProcessThroughput.RING + 1);
                for (long seq = from; seq <= last; seq++) {
                    int base = (int) (seq % CrossProcessThroughput.RING) * CrossProcessThroughput.MESSAGE;
                    if (ringMemory.getLong(base) != seq
                            || ringMemory.getLong(base + CrossProcessThroughput.MESSAGE - 8) != seq) {
                        bad = seq;
                        break;
                    }
                }
                if (bad >= 0) {
                    System.err.println("ThroughputPeer: message " + bad + " did not land in the ring");
                    ok = false;
                }
                qp.postReceive(receives[slot]);
                controlMemory.putInt(replyAt, bad < 0 ? 1 : 0).putLong(replyAt + 8, last);
                qp.postSend(reply);
            }
        }
        BenchSupport.skipTo(events, CmEvent.Disconnected.class, STEP);
        id.disconnect();
        id.destroyQueuePair();
        BenchSupport.closeAll(ring, control, cq, channel, pd, id);
        return ok;
    }

    /** Serves the socket connection until a round of 0 messages. */
    private static void socketSink(Socket socket) throws IOException {
        socket.setTcpNoDelay(true);
        DataInputStream in = new DataInputStream(socket.getInputStream());
        DataOutputStream out = new DataOutputStream(socket.getOutputStream());
        byte[] message = new byte[CrossProcessThroughput.MESSAGE];
        ByteBuffer view = ByteBuffer.wrap(message);
        while (true) {
            long count = in.readLong();
            if (count == 0) {
                return;
            }
            long first = in.readLong();
            for (long seq = first; seq < first + count; seq++) {
                in.readFully(message);
                if (view.getLong(0) != seq || view.getLong(message.length - 8) != seq) {
                    throw new IllegalStateException("socket message " + seq + " arrived as " + view.getLong(0));
                }
            }
            out.writeLong(first + count - 1);
            out.flush();
        }
    }
}
