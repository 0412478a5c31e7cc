package io.rdmaactors.jna;

import com.sun.jna.Pointer;
import io.rdmaactors.cm.CmEvent;
import io.rdmaactors.cm.CmEventType;
import io.rdmaactors.cm.UdParameters;
import io.rdmaactors.jna.binding.RdmaCmEvent;
import io.rdmaactors.jna.binding.RdmaCmId;
import io.rdmaactors.jna.binding.RdmaConnParam;
import io.rdmaactors.jna.binding.RdmaEventChannel;
import io.rdmaactors.jna.binding.RdmaUdParam;
import io.rdmaactors.verbs.CmId;
import io.rdmaactors.verbs.EventChannel;
import io.rdmaactors.verbs.InvalidRequestException;
import io.rdmaactors.verbs.PortSpace;
import io.rdmaactors.verbs.ResourceBusyException;
import io.rdmaactors.verbs.ResourceKind;
import io.rdmaactors.verbs.VerbsException;
import java.time.Duration;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * An {@code rdma_event_channel}: its fd is non-blocking and waited on with poll and a wake-up fd.
 * Every event is copied, private data included, and acknowledged at once.
 */
final class JnaEventChannel extends JnaResource implements EventChannel {

    private final FdWaiter waiter;
    /** The ids on the channel by address, which the events fetched name them by. */
    private final Map<Long, JnaCmId> ids = new ConcurrentHashMap<>();
    /** The same by handle, which the events handed on name them by. */
    private final Map<Long, JnaCmId> handles = new ConcurrentHashMap<>();
    private final long[] eventOut = new long[1];
    /** Events the provider raises itself, delivered before the fd's. */
    private final Queue<CmEvent> raised = new ConcurrentLinkedQueue<>();

    JnaEventChannel(JnaFabric fabric, long channel) {
        super(fabric, ResourceKind.EVENT_CHANNEL, channel);
        this.waiter = new FdWaiter(core, new Pointer(channel).getInt(RdmaEventChannel.FD), "rdma_get_cm_event");
    }

    static JnaEventChannel of(EventChannel channel, String call) {
        if (channel instanceof JnaEventChannel j) {
            return j;
        }
        throw new InvalidRequestException(call, "not an event channel of the jna fabric: " + channel);
    }

    JnaCmId createId(PortSpace portSpace) {
        long[] id = new long[1];
        long channel = enter("rdma_create_id");
        try {
            if (core.rdma_create_id(channel, id, 0, portSpace.code()) != 0) {
                throw core.lastError("rdma_create_id");
            }
            return new JnaCmId(fabric, this, id[0], portSpace);
        } finally {
            exit();
        }
    }

    void post(CmEvent event) {
        raised.add(event);
        waiter.wakeup();
    }

    void add(JnaCmId id) {
        ids.put(id.pointer, id);
        handles.put(id.handle(), id);
    }

    /** A new id at the same address may have replaced this one already. */
    void remove(JnaCmId id) {
        ids.remove(id.pointer, id);
        handles.remove(id.handle(), id);
    }

    @Override
    public CmId cmId(long handle) {
        return handles.get(handle);
    }

    @Override
    public CmEvent await(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        do {
            long channel = enter("rdma_get_cm_event");
            try {
                CmEvent own = raised.poll();
                if (own != null) {
                    return own;
                }
                if (!waiter.await(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())), "rdma_get_cm_event")) {
                    return raised.poll();
                }
                CmEvent event = take(channel);
                if (event != null) {
                    return event;
                }
            } finally {
                exit();
            }
        } while (System.nanoTime() < deadline);
        return null;
    }

    private synchronized CmEvent take(long channel) {
        if (core.rdma_get_cm_event(channel, eventOut) != 0) {
            int errno = core.errno();
            if (errno == VerbsException.EAGAIN) {
                return null;
            }
            throw core.failure("rdma_get_cm_event", errno);
        }
        long pointer = eventOut[0];
        try {
            return copy(new RdmaCmEvent(new Pointer(pointer)));
        } finally {
            core.rdma_ack_cm_event(pointer);
        }
    }

    private CmEvent copy(RdmaCmEvent e) {
        long idPointer = e.getPointer().getLong(RdmaCmEvent.ID);
        int ps = new Pointer(idPointer).getInt(RdmaCmId.PS);
        boolean ud = ps == PortSpace.UDP.code() || ps == PortSpace.IPOIB.code();
        e.param.setType(ud ? RdmaUdParam.class : RdmaConnParam.class);
        e.read();
        byte[] data;
        UdParameters udParameters = null;
        if (ud) {
            RdmaUdParam p = e.param.ud;
            data = bytes(p.private_data, p.private_data_len);
            if (e.event == CmEventType.MULTICAST_JOIN.code() || e.event == CmEventType.ESTABLISHED.code()
                    || e.event == CmEventType.CONNECT_REQUEST.code()) {
                udParameters = new UdParameters(p.qp_num, p.qkey, p.ah_attr.toAddressVector());
            }
        } else {
            data = bytes(e.param.conn.private_data, e.param.conn.private_data_len);
        }
        // the addresses name ids live now: the ack that lets an id be destroyed comes after this
        JnaCmId listener = e.listen_id == 0 ? null : ids.get(e.listen_id);
        if (e.event == CmEventType.CONNECT_REQUEST.code()) {
            new JnaCmId(fabric, this, e.id, listener != null ? listener.portSpace() : PortSpace.TCP);
        }
        JnaCmId id = ids.get(e.id);
        if (id != null) {
            id.observe(e.event);
        }
        return CmEvent.fromNative(e.event, id != null ? id.handle() : 0, listener != null ? listener.handle() : 0,
                e.status, data, udParameters);
    }

    private static byte[] bytes(long pointer, byte length) {
        return pointer == 0 ? new byte[0] : new Pointer(pointer).getByteArray(0, Byte.toUnsignedInt(length));
    }

    @Override
    public void wakeup() {
        waiter.wakeup();
    }

    @Override
    void checkDestroyable() {
        if (!ids.isEmpty()) {
            throw new ResourceBusyException("rdma_destroy_event_channel", ids.size() + " CM ids are on the channel");
        }
    }

    @Override
    void stopWaits() {
        waiter.shutdown();
    }

    @Override
    String destroyCall() {
        return "rdma_destroy_event_channel";
    }

    @Override
    int destroy(boolean force) {
        core.rdma_destroy_event_channel(pointer);
        waiter.release();
        return 0;
    }
}
