package io.rdmaactors.actors;

import io.rdmaactors.cm.CmEvent;
import io.rdmaactors.verbs.CmId;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.Terminated;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;

/**
 * Owns a listening CM id. Each connect request its admission rules let through becomes an agent
 * {@link ConnectionActor} that asks the bind handler to accept or reject it; the others it rejects
 * itself, saying why in the reject's private data. Unbinding, or the bind handler's death, stops
 * listening; connections already handed out live on.
 */
final class ListenerActor extends AbstractBehavior<RdmaProtocol.ListenerCommand> {

    /** A CM event for the listening id. */
    record Event(CmEvent event) implements RdmaProtocol.ListenerCommand {
    }

    /** An agent this listener admitted has started: it counts as open until it is released or stops. */
    record Admitted(ActorRef<RdmaProtocol.ConnectionCommand> agent) implements RdmaProtocol.ListenerCommand {
    }

    /** An admitted agent's connection closed and freed its resources (its actor may linger to answer). */
    record Released(ActorRef<RdmaProtocol.ConnectionCommand> agent) implements RdmaProtocol.ListenerCommand {
    }

    private record AgentStopped(ActorRef<RdmaProtocol.ConnectionCommand> agent)
            implements RdmaProtocol.ListenerCommand {
    }

    private final CmId id;
    private final ActorRef<RdmaProtocol.ListenerEvent> handler;
    private final RdmaSettings settings;
    private final Devices devices;
    private final ActorRef<CmEventActor.Command> cmEvents;
    /** The shared receive queue every accepted connection receives from, or null: released when this stops. */
    private final SharedReceiveBuffers shared;
    private final RdmaProtocol.Admission admission;
    /** Admitted requests whose agents are not released yet: those started, and those about to start. */
    private int open;
    private final Set<ActorRef<RdmaProtocol.ConnectionCommand>> started = new HashSet<>();
    /** The rate limit's bucket: a request takes a token; tokens refill at admission.perSecond(). */
    private double tokens;
    private long refilled = System.nanoTime();

    static Behavior<RdmaProtocol.ListenerCommand> create(CmId id, RdmaProtocol.Listen listen, RdmaSettings settings,
                                                         Devices devices,
                                                         ActorRef<CmEventActor.Command> cmEvents,
                                                         SharedReceiveBuffers shared) {
        return Behaviors.setup(ctx -> new ListenerActor(ctx, id, listen, settings, devices, cmEvents, shared));
    }

    private ListenerActor(ActorContext<RdmaProtocol.ListenerCommand> ctx, CmId id, RdmaProtocol.Listen listen,
                          RdmaSettings settings, Devices devices, ActorRef<CmEventActor.Command> cmEvents,
                          SharedReceiveBuffers shared) {
        super(ctx);
        ActorRef<RdmaProtocol.ListenerEvent> handler = listen.handler();
        this.admission = listen.admission();
        this.tokens = burst();
        this.id = id;
        this.handler = handler;
        this.settings = settings;
        this.devices = devices;
        this.cmEvents = cmEvents;
        this.shared = shared;
        ctx.watch(handler);
        handler.tell(new RdmaProtocol.Listening(id.localAddress(), ctx.getSelf()));
    }

    @Override
    public Receive<RdmaProtocol.ListenerCommand> createReceive() {
        return newReceiveBuilder()
                .onMessage(Event.class, e -> onEvent(e.event()))
                .onMessage(Admitted.class, a -> {
                    started.add(a.agent());
                    getContext().watchWith(a.agent(), new AgentStopped(a.agent()));
                    return this;
                })
                .onMessage(Released.class, r -> ended(r.agent()))
                .onMessage(AgentStopped.class, a -> ended(a.agent()))
                .onMessage(RdmaProtocol.Unbind.class, u -> Behaviors.stopped())
                .onSignal(Terminated.class, t -> Behaviors.stopped())
                .onSignal(PostStop.class, s -> {
                    id.close();
                    if (shared != null) {
                        shared.release();
                    }
                    handler.tell(new RdmaProtocol.Unbound());
                    Rdma.get(getContext().getSystem()).toldAtShutdown(handler);
                    return this;
                })
                .build();
    }

    /** Released, then stopped: the agent counts once. */
    private Behavior<RdmaProtocol.ListenerCommand> ended(ActorRef<RdmaProtocol.ConnectionCommand> agent) {
        if (started.remove(agent)) {
            open--;
        }
        return this;
    }

    private Behavior<RdmaProtocol.ListenerCommand> onEvent(CmEvent event) {
        if (event instanceof CmEvent.ConnectRequest request) {
            CmId requested = id.channel().cmId(request.id());
            String refusal = refusal(requested.remoteAddress(), request.privateData());
            if (refusal != null) {
                reject(requested, refusal);
                return this;
            }
            open++;
            Behavior<RdmaProtocol.ConnectionCommand> agent = ConnectionActor.agent(requested, request.privateData(),
                    handler, getContext().getSelf(), settings, devices, shared);
            cmEvents.tell(new CmEventActor.AdoptAgent(request.id(), agent));
        } else if (event instanceof CmEvent.DeviceRemoval) {
            getContext().getLog().warn("the device under listener {} was removed", id.localAddress());
            return Behaviors.stopped();
        }
        return this;
    }

    private double burst() {
        return Math.max(1, Math.min(admission.perSecond(), Integer.MAX_VALUE));
    }

    /** Why admission refuses this request, or null if it may go to the handler. */
    private String refusal(InetSocketAddress remote, byte[] privateData) {
        if (open >= admission.maxConnections()) {
            return "admission: " + open + " connections open, the most this listener takes";
        }
        long now = System.nanoTime();
        tokens = Math.min(burst(), tokens + (now - refilled) / 1e9 * admission.perSecond());
        refilled = now;
        if (tokens < 1) {
            return "admission: more than " + admission.perSecond() + " requests a second";
        }
        if (!admission.filter().admit(remote, privateData)) {
            return "admission: refused by the listener's filter";
        }
        tokens--;
        return null;
    }

    private void reject(CmId requested, String why) {
        try {
            requested.reject(why.getBytes(StandardCharsets.US_ASCII));
        } catch (RuntimeException e) {
            getContext().getLog().debug("reject of {} failed", requested.remoteAddress(), e);
        } finally {
            requested.close();
            cmEvents.tell(new CmEventActor.RequestRefused(requested.handle()));
        }
    }
}
