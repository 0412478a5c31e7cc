package io.rdmaactors.actors;

import io.rdmaactors.actors.RdmaProtocol.CommandFailed;
import io.rdmaactors.actors.RdmaProtocol.MulticastCommand;
import io.rdmaactors.cm.CmEvent;
import io.rdmaactors.cm.UdParameters;
import io.rdmaactors.verbs.AddressHandle;
import io.rdmaactors.verbs.CmId;
import io.rdmaactors.verbs.CompletionQueue;
import io.rdmaactors.verbs.Device;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.ProtectionDomain;
import io.rdmaactors.verbs.QpInitAttributes;
import io.rdmaactors.verbs.QueueFullException;
import io.rdmaactors.verbs.QueuePair;
import io.rdmaactors.verbs.ReceiveWorkRequest;
import io.rdmaactors.verbs.SendWorkRequest;
import io.rdmaactors.verbs.WorkCompletion;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.util.ByteString;

/**
 * A multicast group member: a UDP-port-space CM id, its UD QP, CQ, buffers and the group's address
 * handle. It resolves, joins (MULTICAST_JOIN gives the address vector, QP number and Q_Key to send
 * with), sends datagrams to the group and delivers those it receives without their 40-byte GRH.
 * Leaving, the handler's death, or an error stops it; PostStop frees everything in rdma-core's order.
 */
final class MulticastActor {

    record Cm(CmEvent event) implements MulticastCommand {
    }

    private record Notified() implements MulticastCommand {
    }

    private record ChannelFailed(Throwable cause) implements MulticastCommand {
    }

    private record HandlerTerminated() implements MulticastCommand {
    }

    private static final int GRH_BYTES = 40;
    /** wr_id bit that marks a receive; the low bits are the buffer slot. */
    private static final long RECEIVE = 1L << 62;

    private final ActorContext<MulticastCommand> ctx;
    private final CmId id;
    private final RdmaProtocol.JoinMulticast join;
    private final RdmaSettings settings;
    private final Devices devices;
    private ProtectionDomain pd;
    private CompletionQueue cq;
    private QueuePair qp;
    private MemoryRegion sendBuffers;
    private MemoryRegion receiveBuffers;
    private CompletionPoller.Subscription completions;
    private AddressHandle group;
    private UdParameters destination;
    private boolean joined;
    private final ArrayDeque<Integer> freeSlots = new ArrayDeque<>();
    private Object[] acks;
    private final WorkCompletion[] batch = new WorkCompletion[32];

    private MulticastActor(ActorContext<MulticastCommand> ctx, CmId id, RdmaProtocol.JoinMulticast join,
                           RdmaSettings settings, Devices devices) {
        this.ctx = ctx;
        this.id = id;
        this.join = join;
        this.settings = settings;
        this.devices = devices;
    }

    static Behavior<MulticastCommand> create(CmId id, RdmaProtocol.JoinMulticast join, RdmaSettings settings,
                                             Devices devices) {
        return Behaviors.setup(ctx -> {
            MulticastActor m = new MulticastActor(ctx, id, join, settings, devices);
            ctx.watchWith(join.handler(), new HandlerTerminated());
            try {
                id.resolveAddress(join.source(), join.group(), settings.resolveTimeout());
            } catch (RuntimeException e) {
                return m.fail(e);
            }
            return m.behavior();
        });
    }

    private Behavior<MulticastCommand> behavior() {
        return Behaviors.receive(MulticastCommand.class)
                .onMessage(Cm.class, c -> onCm(c.event()))
                .onMessage(Notified.class, n -> {
                    completions.rearm();
                    pollAll();
                    return Behaviors.same();
                })
                .onMessage(RdmaProtocol.SendToGroup.class, this::onSend)
                .onMessage(RdmaProtocol.Leave.class, l -> Behaviors.stopped())
                .onMessage(HandlerTerminated.class, t -> Behaviors.stopped())
                .onMessage(ChannelFailed.class, f -> fail(f.cause()))
                .onSignal(PostStop.class, s -> release())
                .build();
    }

    private Behavior<MulticastCommand> onCm(CmEvent event) {
        try {
            if (event instanceof CmEvent.AddrResolved) {
                createQueuePair();
                id.joinMulticast(join.group());
            } else if (event instanceof CmEvent.MulticastJoin j) {
                destination = j.ud();
                group = pd.createAddressHandle(destination.addressVector());
                joined = true;
                join.handler().tell(new RdmaProtocol.Joined(join.group(), ctx.getSelf()));
            } else if (event instanceof CmEvent.AddrError || event instanceof CmEvent.MulticastError
                    || event instanceof CmEvent.DeviceRemoval) {
                return fail(new IllegalStateException("multicast on " + join.group() + " failed: " + event));
            }
        } catch (RuntimeException e) {
            return fail(e);
        }
        return Behaviors.same();
    }

    private void createQueuePair() {
        Device device = id.device();
        int depth = settings.receiveQueueDepth();
        int slot = settings.bufferSize() + GRH_BYTES;
        pd = device.allocateProtectionDomain();
        CompletionPoller poller = devices.poller(device);
        cq = device.createCompletionQueue(settings.sendQueueDepth() + depth, poller.channel());
        completions = poller.subscribe(cq);
        qp = id.createQueuePair(pd, QpInitAttributes.ud(cq, settings.sendQueueDepth(), depth));
        sendBuffers = pd.register(ByteBuffer.allocateDirect(settings.sendQueueDepth() * settings.bufferSize()));
        receiveBuffers = pd.register(ByteBuffer.allocateDirect(depth * slot));
        for (int i = 0; i < depth; i++) {
            qp.postReceive(ReceiveWorkRequest.of(RECEIVE | i, receiveBuffers.sge(i * slot, slot)));
        }
        acks = new Object[settings.sendQueueDepth()];
        for (int i = 0; i < settings.sendQueueDepth(); i++) {
            freeSlots.add(i);
        }
        completions.route(ctx.getSelf(), new Notified(), ChannelFailed::new);
        completions.rearm();
    }

    private Behavior<MulticastCommand> onSend(RdmaProtocol.SendToGroup send) {
        Integer slot = joined ? freeSlots.poll() : null;
        if (slot == null) {
            join.handler().tell(new CommandFailed(send, joined
                    ? new QueueFullException("ibv_post_send", "the send queue is full")
                    : new IllegalStateException("not joined yet")));
            return Behaviors.same();
        }
        try {
            int base = slot * settings.bufferSize();
            if (send.data().size() > settings.bufferSize()) {
                throw new IllegalArgumentException(send.data().size() + " bytes exceed the buffer size");
            }
            sendBuffers.buffer().put(base, send.data().toArrayUnsafe());
            qp.postSend(SendWorkRequest.send(slot, sendBuffers.sge(base, send.data().size()))
                    .to(group, destination.qpNum(), destination.qkey()));
            acks[slot] = send;
        } catch (RuntimeException e) {
            freeSlots.addFirst(slot);
            join.handler().tell(new CommandFailed(send, e));
        }
        return Behaviors.same();
    }

    private void pollAll() {
        int n;
        int slotSize = settings.bufferSize() + GRH_BYTES;
        ByteBuffer memory = receiveBuffers.buffer();
        while ((n = cq.poll(batch)) > 0) {
            for (int i = 0; i < n; i++) {
                WorkCompletion wc = batch[i];
                if ((wc.wrId() & RECEIVE) != 0) {
                    int slot = (int) (wc.wrId() & ~RECEIVE);
                    if (wc.isSuccess()) {
                        byte[] data = new byte[wc.byteLen() - GRH_BYTES];
                        memory.get(slot * slotSize + GRH_BYTES, data);
                        join.handler().tell(new RdmaProtocol.MulticastReceived(ByteString.fromArrayUnsafe(data),
                                wc.srcQp()));
                        qp.postReceive(ReceiveWorkRequest.of(wc.wrId(), receiveBuffers.sge(slot * slotSize, slotSize)));
                    }
                } else {
                    int slot = (int) wc.wrId();
                    RdmaProtocol.SendToGroup send = (RdmaProtocol.SendToGroup) acks[slot];
                    acks[slot] = null;
                    freeSlots.add(slot);
                    if (send != null) {
                        join.handler().tell(wc.isSuccess() ? new RdmaProtocol.MulticastSent(send.ack())
                                : new CommandFailed(send, new RdmaProtocol.WorkRequestFailed(wc.status())));
                    }
                }
            }
        }
    }

    private Behavior<MulticastCommand> fail(Throwable cause) {
        join.handler().tell(new CommandFailed(join, cause));
        return Behaviors.stopped();
    }

    /** Leaves, then frees in rdma-core's order: QP, AH, CQ, MRs, PD, id. */
    private Behavior<MulticastCommand> release() {
        if (joined) {
            id.leaveMulticast(join.group());
            join.handler().tell(new RdmaProtocol.Left());
        }
        for (int slot = 0; acks != null && slot < acks.length; slot++) {
            if (acks[slot] != null) {
                join.handler().tell(new CommandFailed(acks[slot], new RdmaProtocol.ConnectionClosed("left the group")));
            }
        }
        Rdma.get(ctx.getSystem()).toldAtShutdown(join.handler());
        id.destroyQueuePair();
        if (group != null) {
            group.close();
        }
        for (AutoCloseable c : new AutoCloseable[] {completions, sendBuffers, receiveBuffers, pd}) {
            if (c != null) {
                try {
                    c.close();
                } catch (Exception e) {
                    ctx.getLog().warn("releasing multicast resources", e);
                }
            }
        }
        id.close();
        return Behaviors.same();
    }
}
