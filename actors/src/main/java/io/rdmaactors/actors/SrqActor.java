package io.rdmaactors.actors;

import io.rdmaactors.verbs.CompletionChannel;
import io.rdmaactors.verbs.CompletionQueue;
import io.rdmaactors.verbs.Device;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.ProtectionDomain;
import io.rdmaactors.verbs.ReceiveWorkRequest;
import io.rdmaactors.verbs.SharedReceiveQueue;
import io.rdmaactors.verbs.WorkCompletion;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;

/**
 * A shared receive queue for every connection a listener accepts (the multi-QP server): owns the
 * SRQ, its receive buffers, the CQ all those QPs receive on and that CQ's pump, keeps every buffer
 * posted, and routes each receive by qp_num to its connection. The connections are its children, so
 * their QPs are gone before the SRQ is destroyed (ibv_destroy_srq fails while a QP is attached).
 */
final class SrqActor extends AbstractBehavior<SrqActor.Command> {

    interface Command {
    }

    /** What a connection on this SRQ creates its QP with; the PD, SRQ and CQ stay this actor's. */
    record Shared(ProtectionDomain pd, SharedReceiveQueue srq, CompletionQueue cq, ActorRef<Command> owner) {
    }

    /** The native resources, created before the actor so the listener can hand them out at once. */
    static final class Resources {
        final ProtectionDomain pd;
        final SharedReceiveQueue srq;
        final CompletionChannel channel;
        final CompletionQueue cq;
        final MemoryRegion buffers;
        final int slotSize;
        final int slots;

        Resources(Device device, RdmaSettings settings) {
            this.slotSize = settings.bufferSize();
            // several connections share it: a few times one connection's receive queue
            this.slots = settings.receiveQueueDepth() * 4;
            this.pd = device.allocateProtectionDomain();
            this.srq = pd.createSharedReceiveQueue(slots, 1);
            this.channel = device.createCompletionChannel();
            this.cq = device.createCompletionQueue(slots * 2, channel);
            this.buffers = pd.register(ByteBuffer.allocateDirect(slots * slotSize));
        }

        void close() {
            srq.close();
            cq.close();
            channel.close();
            buffers.close();
            pd.close();
        }
    }

    record Adopt(long handle, Behavior<RdmaProtocol.ConnectionCommand> agent) implements Command {
    }

    record Attach(int qpNum, ActorRef<RdmaProtocol.ConnectionCommand> connection) implements Command {
    }

    record Detach(int qpNum) implements Command {
    }

    record ListenerStopped() implements Command {
    }

    record LimitReached() implements Command {
    }

    private record Notified() implements Command {
    }

    private record ChannelFailed(Throwable cause) implements Command {
    }

    private record ChildStopped() implements Command {
    }

    private final ActorRef<CmEventActor.Command> cmEvents;
    private final Resources resources;
    private final SharedReceiveQueue srq;
    private final CompletionChannel channel;
    private final CompletionQueue cq;
    private final MemoryRegion buffers;
    private final int slotSize;
    private final int slots;
    private final CompletionNotifier notifier;
    private final Map<Integer, ActorRef<RdmaProtocol.ConnectionCommand>> byQp = new HashMap<>();
    private final WorkCompletion[] batch = new WorkCompletion[32];
    private int children;
    private boolean listenerStopped;

    static Behavior<Command> create(Resources resources, ActorRef<CmEventActor.Command> cmEvents,
                                    ActorRef<DeviceActor.Command> device) {
        return Behaviors.setup(ctx -> new SrqActor(ctx, resources, cmEvents, device));
    }

    private SrqActor(ActorContext<Command> ctx, Resources resources, ActorRef<CmEventActor.Command> cmEvents,
                     ActorRef<DeviceActor.Command> device) {
        super(ctx);
        this.cmEvents = cmEvents;
        this.resources = resources;
        this.srq = resources.srq;
        this.channel = resources.channel;
        this.cq = resources.cq;
        this.buffers = resources.buffers;
        this.slotSize = resources.slotSize;
        this.slots = resources.slots;
        for (int slot = 0; slot < slots; slot++) {
            repost(slot);
        }
        srq.armLimit(slots / 4);
        if (device != null) {
            device.tell(new DeviceActor.RegisterSrq(srq.handle(), ctx.getSelf()));
        }
        this.notifier = new CompletionNotifier("rdma-srq-" + srq.handle(), cq, channel, ctx.getSelf(), new Notified(),
                ChannelFailed::new);
    }

    private void repost(int slot) {
        srq.postReceive(ReceiveWorkRequest.of(slot, buffers.sge(slot * slotSize, slotSize)));
    }

    @Override
    public Receive<Command> createReceive() {
        return newReceiveBuilder()
                .onMessage(Adopt.class, a -> {
                    ActorRef<RdmaProtocol.ConnectionCommand> agent = getContext().spawn(a.agent(),
                            "connection-" + a.handle());
                    getContext().watchWith(agent, new ChildStopped());
                    children++;
                    cmEvents.tell(new CmEventActor.Route(a.handle(), agent));
                    return this;
                })
                .onMessage(Attach.class, a -> {
                    byQp.put(a.qpNum(), a.connection());
                    return this;
                })
                .onMessage(Detach.class, d -> {
                    byQp.remove(d.qpNum());
                    return this;
                })
                .onMessage(ChildStopped.class, c -> {
                    children--;
                    return stopWhenUnused();
                })
                .onMessage(ListenerStopped.class, l -> {
                    listenerStopped = true;
                    return stopWhenUnused();
                })
                .onMessage(LimitReached.class, l -> {
                    getContext().getLog().debug("SRQ {} ran low on receives", srq.handle());
                    srq.armLimit(slots / 4);
                    return this;
                })
                .onMessage(Notified.class, n -> {
                    notifier.rearm();
                    pollAll();
                    return this;
                })
                .onMessage(ChannelFailed.class, f -> {
                    throw new IllegalStateException("the SRQ's completion channel failed", f.cause());
                })
                .onSignal(PostStop.class, s -> {
                    notifier.close();
                    resources.close();
                    return this;
                })
                .build();
    }

    private Behavior<Command> stopWhenUnused() {
        return listenerStopped && children == 0 ? Behaviors.stopped() : this;
    }

    private void pollAll() {
        int n;
        ByteBuffer memory = buffers.buffer();
        while ((n = cq.poll(batch)) > 0) {
            for (int i = 0; i < n; i++) {
                WorkCompletion wc = batch[i];
                int slot = (int) wc.wrId();
                ActorRef<RdmaProtocol.ConnectionCommand> connection = byQp.get(wc.qpNum());
                if (wc.isSuccess() && connection != null) {
                    byte[] data = new byte[wc.byteLen()];
                    memory.get(slot * slotSize, data);
                    connection.tell(new ConnectionActor.SharedReceived(
                            new RdmaProtocol.Received(data, wc.hasImmediate() ? wc.immData() : null)));
                }
                repost(slot);
            }
        }
    }

}
