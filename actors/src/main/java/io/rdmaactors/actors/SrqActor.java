package io.rdmaactors.actors;

import io.rdmaactors.verbs.CompletionQueue;
import io.rdmaactors.verbs.Device;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.ProtectionDomain;
import io.rdmaactors.verbs.ReceiveWorkRequest;
import io.rdmaactors.verbs.SharedReceiveQueue;
import io.rdmaactors.verbs.WorkCompletion;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.util.ByteString;

/**
 * A shared receive queue for every connection a listener accepts (the multi-QP server): owns the
 * SRQ, its receive buffers, the CQ all those QPs receive on, keeps every buffer
 * posted, and routes each receive by qp_num to its connection's QP actor, which delivers it in order
 * with the rest. The connections are its children, so
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
        final CompletionQueue cq;
        final CompletionPoller.Subscription completions;
        final MemoryRegion buffers;
        final int slotSize;
        final int slots;

        Resources(Device device, RdmaSettings settings, CompletionPoller poller) {
            this.slotSize = settings.bufferSize();
            // several connections share it: a few times one connection's receive queue
            this.slots = settings.receiveQueueDepth() * 4;
            this.pd = device.allocateProtectionDomain();
            this.srq = pd.createSharedReceiveQueue(slots, 1);
            this.cq = device.createCompletionQueue(slots * 2, poller.channel());
            this.completions = poller.subscribe(cq);
            this.buffers = pd.register(ByteBuffer.allocateDirect(slots * slotSize));
        }

        void close() {
            srq.close();
            completions.close();
            buffers.close();
            pd.close();
        }
    }

    record Adopt(long handle, Behavior<RdmaProtocol.ConnectionCommand> agent) implements Command {
    }

    /** The connection's QP actor started: receives for {@code qpNum} go to it from now on. */
    record Attach(int qpNum, ActorRef<RdmaProtocol.ConnectionCommand> queuePair) implements Command {
    }

    /** The connection destroyed its QP: nothing of it holds the SRQ any more, though its actor may linger to answer. */
    record Detach(int qpNum, ActorRef<RdmaProtocol.ConnectionCommand> connection) implements Command {
    }

    /**
     * A connection whose peer disconnected asks for what the SRQ still holds for it (the peer's
     * closing notice among it), then hears SrqPolled after it.
     */
    record PollFor(ActorRef<RdmaProtocol.ConnectionCommand> connection) implements Command {
    }

    record ListenerStopped() implements Command {
    }

    record LimitReached() implements Command {
    }

    private record Notified() implements Command {
    }

    private record ChannelFailed(Throwable cause) implements Command {
    }

    private record ChildStopped(ActorRef<RdmaProtocol.ConnectionCommand> connection) implements Command {
    }

    private final ActorRef<CmEventActor.Command> cmEvents;
    private final Props connectionProps;
    private final Resources resources;
    private final SharedReceiveQueue srq;
    private final CompletionQueue cq;
    private final MemoryRegion buffers;
    private final int slotSize;
    private final int slots;
    private final CompletionPoller.Subscription completions;
    /** Each attached QP's actor, by qp_num. */
    private final Map<Integer, ActorRef<RdmaProtocol.ConnectionCommand>> byQp = new HashMap<>();
    /**
     * Receives for QPs whose Attach is still on its way: a poll drains the whole CQ, so it can run
     * ahead of the Attach a new connection sends once its QP actor started.
     */
    private final Map<Integer, List<RdmaProtocol.Received>> early = new HashMap<>();
    private final WorkCompletion[] batch = new WorkCompletion[32];
    /** Connections that may still hold a QP on the SRQ: started, and neither detached nor stopped. */
    private final Set<ActorRef<RdmaProtocol.ConnectionCommand>> children = new HashSet<>();
    private long spawned;
    private boolean listenerStopped;

    static Behavior<Command> create(Resources resources, ActorRef<CmEventActor.Command> cmEvents,
                                    ActorRef<DeviceActor.Command> device, RdmaSettings settings) {
        return Behaviors.setup(ctx -> new SrqActor(ctx, resources, cmEvents, device, settings));
    }

    private SrqActor(ActorContext<Command> ctx, Resources resources, ActorRef<CmEventActor.Command> cmEvents,
                     ActorRef<DeviceActor.Command> device, RdmaSettings settings) {
        super(ctx);
        this.cmEvents = cmEvents;
        this.connectionProps = Props.empty().withDispatcherFromConfig(settings.verbsDispatcher());
        this.resources = resources;
        this.srq = resources.srq;
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
        this.completions = resources.completions;
        completions.route(ctx.getSelf(), new Notified(), ChannelFailed::new);
        completions.rearm();
        pollAll();
    }

    private void repost(int slot) {
        srq.postReceive(ReceiveWorkRequest.of(slot, buffers.sge(slot * slotSize, slotSize)));
    }

    @Override
    public Receive<Command> createReceive() {
        return newReceiveBuilder()
                .onMessage(Adopt.class, a -> {
                    // the handle of a destroyed id comes back for a new one: the count keeps names unique
                    ActorRef<RdmaProtocol.ConnectionCommand> agent = getContext().spawn(a.agent(),
                            "connection-" + a.handle() + "-" + ++spawned, connectionProps);
                    getContext().watchWith(agent, new ChildStopped(agent));
                    children.add(agent);
                    cmEvents.tell(new CmEventActor.Route(a.handle(), agent));
                    return this;
                })
                .onMessage(Attach.class, a -> {
                    byQp.put(a.qpNum(), a.queuePair());
                    List<RdmaProtocol.Received> waiting = early.remove(a.qpNum());
                    if (waiting != null) {
                        waiting.forEach(r -> a.queuePair().tell(new ConnectionProtocol.SharedReceive(r)));
                    }
                    return this;
                })
                .onMessage(Detach.class, d -> {
                    byQp.remove(d.qpNum());
                    early.remove(d.qpNum());
                    children.remove(d.connection());
                    return stopWhenUnused();
                })
                .onMessage(ChildStopped.class, c -> {
                    children.remove(c.connection());
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
                    completions.rearm();
                    pollAll();
                    return this;
                })
                .onMessage(PollFor.class, p -> {
                    pollAll();
                    p.connection().tell(new ConnectionProtocol.SrqPolled());
                    return this;
                })
                .onMessage(ChannelFailed.class, f -> {
                    throw new IllegalStateException("the SRQ's completion channel failed", f.cause());
                })
                .onSignal(PostStop.class, s -> {
                    resources.close();
                    return this;
                })
                .build();
    }

    private Behavior<Command> stopWhenUnused() {
        return listenerStopped && children.isEmpty() ? Behaviors.stopped() : this;
    }

    private void pollAll() {
        int n;
        ByteBuffer memory = buffers.buffer();
        while ((n = cq.poll(batch)) > 0) {
            for (int i = 0; i < n; i++) {
                WorkCompletion wc = batch[i];
                int slot = (int) wc.wrId();
                if (wc.isSuccess()) {
                    byte[] data = new byte[wc.byteLen()];
                    memory.get(slot * slotSize, data);
                    RdmaProtocol.Received received = new RdmaProtocol.Received(ByteString.fromArrayUnsafe(data),
                            wc.hasImmediate() ? wc.immData() : null);
                    ActorRef<RdmaProtocol.ConnectionCommand> queuePair = byQp.get(wc.qpNum());
                    if (queuePair != null) {
                        queuePair.tell(new ConnectionProtocol.SharedReceive(received));
                    } else {
                        early.computeIfAbsent(wc.qpNum(), q -> new ArrayList<>()).add(received);
                    }
                }
                repost(slot);
            }
        }
    }

}
