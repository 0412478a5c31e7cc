package io.rdmaactors.examples;

import io.rdmaactors.cm.CmEvent;
import io.rdmaactors.verbs.Access;
import io.rdmaactors.verbs.AddressInfo;
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
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.EnumSet;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * rdma-core's rping, wire-compatible: each send carries a buffer's address, rkey and size in
 * network byte order; the server RDMA-reads the client's buffer, tells it to go on, then
 * RDMA-writes the data back into the buffer the client names next, and the client checks it.
 * Either side can face rdma-core's own {@code rping}; {@code --loopback} runs both here.
 */
@Command(name = "rping",
        description = "rping-compatible RDMA read/write ping (server, client, or both in one process).")
public final class Rping implements Callable<Integer> {

    private static final Duration STEP = Duration.ofSeconds(10);
    /** struct rping_rdma_info: __be64 buf, __be32 rkey, __be32 size. */
    private static final int INFO = 16;

    @Mixin
    RdmaFlags flags;

    @Option(names = {"-C", "--count"}, defaultValue = "100", description = "pings the client sends (default ${DEFAULT-VALUE})")
    int count;

    @Option(names = {"-S", "--size"}, defaultValue = "64", description = "ping size in bytes, 16 to 65535 as rping's (default ${DEFAULT-VALUE})")
    int size;

    @Option(names = {"-V", "--verify"}, negatable = true, defaultValue = "true", fallbackValue = "true",
            description = "check every echo, as rping -V does (default; --no-verify checks nothing)")
    boolean verify;

    /** The peer disconnected while this side waited for a completion. */
    private static final class PeerDisconnected extends RuntimeException {
        PeerDisconnected() {
            super("the peer disconnected mid-stream");
        }
    }

    /** One side's id, CQ, QP and rping's four buffers. */
    private static final class Side implements AutoCloseable {
        final CmId id;
        final EventChannel events;
        final ProtectionDomain pd;
        final CompletionQueue cq;
        final QueuePair qp;
        final MemoryRegion recvInfo;
        final MemoryRegion sendInfo;
        final MemoryRegion rdma;
        final MemoryRegion start;
        final WorkCompletion[] one = new WorkCompletion[1];
        final ArrayDeque<WorkCompletion> early = new ArrayDeque<>();

        /** The client exports its start buffer for reading and its rdma buffer for writing; the server nothing. */
        Side(CmId id, EventChannel events, int size, boolean isClient) {
            this.id = id;
            this.events = events;
            pd = id.device().allocateProtectionDomain();
            cq = id.device().createCompletionQueue(16, null);
            qp = id.createQueuePair(pd, QpInitAttributes.rc(cq, 4, 4));
            recvInfo = pd.register(ByteBuffer.allocateDirect(INFO));
            sendInfo = pd.register(ByteBuffer.allocateDirect(INFO));
            rdma = pd.register(ByteBuffer.allocateDirect(size), isClient
                    ? EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE) : EnumSet.of(Access.LOCAL_WRITE));
            start = isClient ? pd.register(ByteBuffer.allocateDirect(size), EnumSet.of(Access.REMOTE_READ)) : null;
            qp.postReceive(ReceiveWorkRequest.of(0, recvInfo.sge()));
        }

        /** The peer's DISCONNECTED came: the next wait that finds nothing in the CQ ends. */
        private boolean peerGone;

        /**
         * The next successful completion of this kind. A send's completion and the peer's answer to
         * it can land in either order (rping's CQ handler takes them as they come), so the other
         * kind waits in {@link #early}. The peer's DISCONNECTED ends the wait, but only after one
         * more poll: the completion of the last send may land just before it, between a poll and
         * the look at the events.
         */
        WorkCompletion next(WcOpcode expected) throws Exception {
            for (WorkCompletion wc : early) {
                if (wc.opcode() == expected) {
                    early.remove(wc);
                    return wc;
                }
            }
            long deadline = System.nanoTime() + STEP.toNanos();
            while (true) {
                if (cq.poll(one) == 1) {
                    WorkCompletion wc = one[0];
                    if (!wc.isSuccess()) {
                        if (peerGone) {
                            throw new PeerDisconnected();
                        }
                        throw new IllegalStateException("work request failed: " + wc);
                    }
                    if (wc.opcode() == expected) {
                        return wc;
                    }
                    early.add(wc);
                } else if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("no " + expected + " completion within " + STEP);
                } else if (peerGone) {
                    throw new PeerDisconnected(); // rping's cm_thread: a DISCONNECTED ends the wait
                } else if (events.await(Duration.ZERO) instanceof CmEvent.Disconnected) {
                    peerGone = true;
                }
            }
        }

        /** Waits for the peer's next info message, reposts the receive, and returns the info. */
        ByteBuffer receiveInfo() throws Exception {
            next(WcOpcode.RECV);
            ByteBuffer info = ByteBuffer.allocate(INFO);
            recvInfo.buffer().get(0, info.array());
            qp.postReceive(ReceiveWorkRequest.of(0, recvInfo.sge()));
            return info;
        }

        void sendInfo(MemoryRegion region) throws Exception {
            ByteBuffer info = sendInfo.buffer();
            info.putLong(0, region.address()).putInt(8, region.rkey()).putInt(12, region.length());
            qp.postSend(SendWorkRequest.send(1, sendInfo.sge()));
            next(WcOpcode.SEND);
        }

        @Override
        public void close() {
            id.destroyQueuePair();
            for (MemoryRegion mr : new MemoryRegion[] {recvInfo, sendInfo, rdma, start}) {
                if (mr != null) {
                    mr.close();
                }
            }
            cq.close();
            pd.close();
            id.close();
        }
    }

    @Override
    public Integer call() throws Exception {
        flags.check("--count", count, 1, Integer.MAX_VALUE);
        flags.check("--size", size, 16, 65535);
        boolean loopback = flags.role() == RdmaFlags.Role.BOTH;
        boolean server = flags.role() == RdmaFlags.Role.SERVER;
        boolean client = flags.role() == RdmaFlags.Role.CLIENT;
        try (Fabric fabric = Program.open(flags.fabric)) {
            EventChannel events = fabric.createEventChannel();
            // resolved as rping resolves it: getaddrinfo, passive for the side that listens
            boolean passive = server || loopback;
            AddressInfo resolved = fabric.addressInfo(flags.address, String.valueOf(loopback ? 0 : flags.port), passive,
                    PortSpace.TCP).get(0);
            InetSocketAddress where = passive ? resolved.source() : resolved.destination();
            CmId listener = null;
            Thread serving = null;
            String[] serverFailure = new String[1];
            if (server || loopback) {
                listener = fabric.createCmId(events, PortSpace.TCP);
                listener.bind(where);
                listener.listen(1);
                where = listener.localAddress();
                if (server) {
                    Program.announce("rping", where);
                }
                EventChannel serverEvents = events;
                CmId listening = listener;
                serving = new Thread(() -> {
                    try {
                        serve(serverEvents, listening);
                    } catch (Exception e) {
                        serverFailure[0] = e.getMessage();
                    }
                }, "rping-server");
                serving.start();
            }
            if (client || loopback) {
                EventChannel clientEvents = loopback ? fabric.createEventChannel() : events;
                ping(fabric, clientEvents, where);
                if (loopback) {
                    clientEvents.close();
                }
            }
            if (serving != null) {
                serving.join();
                listener.close();
            }
            events.close();
            if (serverFailure[0] != null) {
                throw new Program.Failure("server: " + serverFailure[0], null);
            }
            if (fabric.ledger().total() != 0) {
                throw new Program.Failure("leaked: " + fabric.ledger(), null);
            }
        }
        return 0;
    }

    /** rping_test_server: read the client's buffer, ack, write it back where told, ack; until disconnected. */
    private void serve(EventChannel events, CmId listener) throws Exception {
        CmEvent.ConnectRequest request = CmEvents.expect(events, CmEvent.ConnectRequest.class, Duration.ofMinutes(5));
        try (Side side = new Side(events.cmId(request.id()), events, size, false)) {
            side.id.accept(ConnectionParameters.of(null));
            CmEvents.expect(events, CmEvent.Established.class, STEP);
            int served = 0;
            while (true) {
                ByteBuffer readFrom;
                try {
                    readFrom = side.receiveInfo();
                } catch (PeerDisconnected e) {
                    break;
                }
                long address = readFrom.getLong(0);
                int rkey = readFrom.getInt(8);
                int length = Math.min(readFrom.getInt(12), side.rdma.length());
                side.qp.postSend(SendWorkRequest.read(2, address, rkey, side.rdma.sge(0, length)));
                side.next(WcOpcode.RDMA_READ);
                side.qp.postSend(SendWorkRequest.send(3, side.sendInfo.sge()));
                side.next(WcOpcode.SEND);
                ByteBuffer writeTo = side.receiveInfo();
                side.qp.postSend(SendWorkRequest.write(4, writeTo.getLong(0), writeTo.getInt(8),
                        side.rdma.sge(0, Math.min(length, writeTo.getInt(12)))));
                side.next(WcOpcode.RDMA_WRITE);
                side.qp.postSend(SendWorkRequest.send(5, side.sendInfo.sge()));
                side.next(WcOpcode.SEND);
                served++;
            }
            side.id.disconnect();
            System.out.println("rping server: " + served + " pings read and written back");
        }
    }

    /** rping_test_client: advertise the start buffer, then the rdma buffer, and check the echo. */
    private void ping(Fabric fabric, EventChannel events, InetSocketAddress server) throws Exception {
        CmId id = fabric.createCmId(events, PortSpace.TCP);
        id.resolveAddress(null, server, STEP);
        CmEvents.expect(events, CmEvent.AddrResolved.class, STEP);
        id.resolveRoute(STEP);
        CmEvents.expect(events, CmEvent.RouteResolved.class, STEP);
        try (Side side = new Side(id, events, size, true)) {
            id.connect(ConnectionParameters.of(null));
            CmEvents.expect(events, CmEvent.Established.class, STEP);
            ByteBuffer start = side.start.buffer();
            ByteBuffer echo = side.rdma.buffer();
            int first = 'A';
            for (int ping = 0; ping < count; ping++) {
                // rping's pattern: "rdma-ping-N: " then letters from a moving start, NUL-terminated
                byte[] text = ("rdma-ping-" + ping + ": ").getBytes(StandardCharsets.US_ASCII);
                start.put(0, text, 0, Math.min(text.length, size));
                for (int i = text.length, c = first; i < size; i++) {
                    start.put(i, (byte) c);
                    c = c == 'z' ? 'A' : c + 1;
                }
                first = first == 'z' ? 'A' : first + 1;
                start.put(size - 1, (byte) 0);
                for (int i = 0; i < size; i++) {
                    echo.put(i, (byte) 0);
                }
                side.sendInfo(side.start);
                side.receiveInfo();
                side.sendInfo(side.rdma);
                side.receiveInfo();
                for (int i = 0; verify && i < size; i++) {
                    if (echo.get(i) != start.get(i)) {
                        throw new IllegalStateException("ping " + ping + " came back different at byte " + i);
                    }
                }
            }
            id.disconnect();
            System.out.println("rping client: " + count + " pings of " + size + " bytes, every echo verified");
        }
    }
}
