package io.rdmaactors.ffm.binding;

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
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.reflect.Field;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Two RC QPs connected over the CM on the device's address ({@code rdma-actors.test.address}),
 * made through the jna provider, with the native pointers the FFM downcalls take: each side's
 * context, QP and CQ, and an 8-byte region on each (the server's remotely writable).
 */
final class RcPair implements AutoCloseable {

    private static final Duration STEP = Duration.ofSeconds(60);
    static final String ADDRESS = System.getProperty("rdma-actors.test.address", "10.0.2.15");

    final Fabric fabric;
    final long clientContext;
    final long clientQp;
    final long clientCq;
    final long serverQp;
    final long serverCq;
    final MemoryRegion source;
    final MemoryRegion target;
    private final EventChannel serverEvents;
    private final EventChannel clientEvents;
    private final List<AutoCloseable> resources = new ArrayList<>();

    /** Null where no jna fabric with a device opens here: the tests that need one skip. */
    static String whyUnavailable() {
        try (Fabric f = Fabric.open("jna")) {
            return f.devices().isEmpty() ? "no RDMA device" : null;
        } catch (RuntimeException e) {
            return "no rdma-core fabric: " + e.getMessage();
        }
    }

    RcPair() throws Exception {
        fabric = Fabric.open("jna");
        serverEvents = fabric.createEventChannel();
        clientEvents = fabric.createEventChannel();
        CmId listener = keep(fabric.createCmId(serverEvents, PortSpace.TCP));
        listener.bind(new InetSocketAddress(ADDRESS, 0));
        listener.listen(1);
        CmId client = keep(fabric.createCmId(clientEvents, PortSpace.TCP));
        client.resolveAddress(null, listener.localAddress(), STEP);
        expect(clientEvents, CmEvent.AddrResolved.class);
        client.resolveRoute(STEP);
        expect(clientEvents, CmEvent.RouteResolved.class);
        ProtectionDomain clientPd = keep(client.device().allocateProtectionDomain());
        CompletionQueue clientCompletions = keep(client.device().createCompletionQueue(16, null));
        QueuePair clientPair = keep(client.createQueuePair(clientPd, QpInitAttributes.rc(clientCompletions, 16, 1)));
        source = keep(clientPd.register(ByteBuffer.allocateDirect(8)));
        client.connect(ConnectionParameters.of(new byte[0]));
        CmEvent.ConnectRequest request = expect(serverEvents, CmEvent.ConnectRequest.class);
        CmId server = keep(serverEvents.cmId(request.id()));
        ProtectionDomain serverPd = keep(server.device().allocateProtectionDomain());
        CompletionQueue serverCompletions = keep(server.device().createCompletionQueue(16, null));
        QueuePair serverPair = keep(server.createQueuePair(serverPd, QpInitAttributes.rc(serverCompletions, 1, 1)));
        target = keep(serverPd.register(ByteBuffer.allocateDirect(8), Set.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE)));
        server.accept(ConnectionParameters.of(new byte[0]));
        // the client first: its rdma_get_cm_event sends the RTU that establishes the server
        skipTo(clientEvents, CmEvent.Established.class);
        skipTo(serverEvents, CmEvent.Established.class);
        clientCq = clientCompletions.handle();
        serverCq = serverCompletions.handle();
        clientQp = qpOf(client);
        serverQp = qpOf(server);
        clientContext = field(clientCq, Structs.IBV_CQ, "context");
        resources.add(0, () -> {
            client.disconnect();
            skipTo(serverEvents, CmEvent.Disconnected.class);
            server.disconnect();
            skipTo(clientEvents, CmEvent.Disconnected.class);
        });
    }

    private <T extends AutoCloseable> T keep(T resource) {
        resources.add(0, resource);
        return resource;
    }

    private static long qpOf(CmId id) {
        return field(address(id), Structs.RDMA_CM_ID, "qp");
    }

    /** The id's rdma_cm_id: its handle is counted, not its address, and the SPI offers none. */
    private static long address(CmId id) {
        try {
            Field pointer = Class.forName("io.rdmaactors.jna.JnaResource").getDeclaredField("pointer");
            pointer.setAccessible(true);
            return pointer.getLong(id);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError("the jna provider's resources keep their address in JnaResource.pointer", e);
        }
    }

    static long field(long pointer, StructLayout layout, String path) {
        return MemorySegment.ofAddress(pointer).reinterpret(layout.byteSize())
                .get(ValueLayout.JAVA_LONG, CLayout.offset(layout, path));
    }

    private static <E extends CmEvent> E expect(EventChannel channel, Class<E> kind) throws Exception {
        CmEvent event = channel.await(STEP);
        if (!kind.isInstance(event)) {
            throw new IllegalStateException("expected " + kind.getSimpleName() + ", got " + event);
        }
        return kind.cast(event);
    }

    private static <E extends CmEvent> E skipTo(EventChannel channel, Class<E> kind) throws Exception {
        long deadline = System.nanoTime() + STEP.toNanos();
        while (System.nanoTime() < deadline) {
            CmEvent event = channel.await(Duration.ofNanos(Math.max(1, deadline - System.nanoTime())));
            if (kind.isInstance(event)) {
                return kind.cast(event);
            }
        }
        throw new IllegalStateException("no " + kind.getSimpleName() + " within " + STEP);
    }

    /** Disconnects, then closes every resource in the reverse of its making; the ledger must be empty. */
    @Override
    public void close() {
        for (AutoCloseable r : resources) {
            try {
                r.close();
            } catch (Exception e) {
                throw new IllegalStateException("closing " + r, e);
            }
        }
        serverEvents.close();
        clientEvents.close();
        long leaked = fabric.ledger().total();
        fabric.close();
        if (leaked != 0) {
            throw new IllegalStateException(leaked + " resources leaked");
        }
    }
}
