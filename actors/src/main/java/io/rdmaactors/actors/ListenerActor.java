package io.rdmaactors.actors;

import io.rdmaactors.cm.CmEvent;
import io.rdmaactors.verbs.CmId;
import java.util.Map;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.Terminated;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;

/**
 * Owns a listening CM id. Each connect request becomes an agent {@link ConnectionActor} that asks
 * the bind handler to accept or reject it. Unbinding, or the bind handler's death, stops listening;
 * connections already handed out live on.
 */
final class ListenerActor extends AbstractBehavior<RdmaProtocol.ListenerCommand> {

    /** A CM event for the listening id. */
    record Event(CmEvent event) implements RdmaProtocol.ListenerCommand {
    }

    private final CmId id;
    private final ActorRef<RdmaProtocol.ListenerEvent> handler;
    private final RdmaSettings settings;
    private final Devices devices;
    private final ActorRef<CmEventActor.Command> cmEvents;
    /** The SRQ every accepted connection receives from, or null. */
    private final SrqActor.Shared shared;

    static Behavior<RdmaProtocol.ListenerCommand> create(CmId id, ActorRef<RdmaProtocol.ListenerEvent> handler,
                                                         RdmaSettings settings,
                                                         Devices devices,
                                                         ActorRef<CmEventActor.Command> cmEvents,
                                                         SrqActor.Shared shared) {
        return Behaviors.setup(ctx -> new ListenerActor(ctx, id, handler, settings, devices, cmEvents, shared));
    }

    private ListenerActor(ActorContext<RdmaProtocol.ListenerCommand> ctx, CmId id,
                          ActorRef<RdmaProtocol.ListenerEvent> handler, RdmaSettings settings,
                          Devices devices, ActorRef<CmEventActor.Command> cmEvents,
                          SrqActor.Shared shared) {
        super(ctx);
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
                .onMessage(RdmaProtocol.Unbind.class, u -> Behaviors.stopped())
                .onSignal(Terminated.class, t -> Behaviors.stopped())
                .onSignal(PostStop.class, s -> {
                    id.close();
                    if (shared != null) {
                        shared.owner().tell(new SrqActor.ListenerStopped());
                    }
                    handler.tell(new RdmaProtocol.Unbound());
                    return this;
                })
                .build();
    }

    private Behavior<RdmaProtocol.ListenerCommand> onEvent(CmEvent event) {
        if (event instanceof CmEvent.ConnectRequest request) {
            CmId requested = id.channel().cmId(request.id());
            Behavior<RdmaProtocol.ConnectionCommand> agent = ConnectionActor.agent(requested, request.privateData(),
                    handler, settings, devices, shared);
            if (shared != null) {
                // the SRQ's connections are its children, so their QPs go before the SRQ does
                shared.owner().tell(new SrqActor.Adopt(request.id(), agent));
            } else {
                cmEvents.tell(new CmEventActor.AdoptAgent(request.id(), agent));
            }
        } else if (event instanceof CmEvent.DeviceRemoval) {
            getContext().getLog().warn("the device under listener {} was removed", id.localAddress());
            return Behaviors.stopped();
        }
        return this;
    }
}
