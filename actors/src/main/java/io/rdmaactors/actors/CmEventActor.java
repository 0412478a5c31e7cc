package io.rdmaactors.actors;

import io.rdmaactors.cm.CmEvent;
import io.rdmaactors.cm.EventPump;
import io.rdmaactors.verbs.CmId;
import io.rdmaactors.verbs.EventChannel;
import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.PortSpace;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.PreRestart;
import org.apache.pekko.actor.typed.SupervisorStrategy;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;

/**
 * Owns one RDMA CM event channel and the pump that blocks on it, and routes each event to the actor
 * of the CM id it concerns (a connect request to its listener). Listeners and connections on the
 * channel are its children, so they are gone before the channel is destroyed.
 */
final class CmEventActor extends AbstractBehavior<CmEventActor.Command> {

    interface Command {
    }

    /** Carries out a user's command: if it is lost (the actor stopped first), the command fails. */
    interface Start extends Command {
        Object command();
    }

    /** Creates a listening id and its {@link ListenerActor}. */
    record StartListener(RdmaProtocol.Listen listen) implements Start {
        @Override
        public Object command() {
            return listen;
        }
    }

    /** Creates an active id and its connector {@link ConnectionActor}. */
    record StartConnector(RdmaProtocol.Connect connect) implements Start {
        @Override
        public Object command() {
            return connect;
        }
    }

    /** Creates a UDP id and the {@link MulticastActor} that joins the group with it. */
    record StartMulticast(RdmaProtocol.JoinMulticast join) implements Start {
        @Override
        public Object command() {
            return join;
        }
    }

    /** A listener refused a request and destroyed its id: nothing more is held for it. */
    record RequestRefused(long handle) implements Command {
    }

    /** A listener hands over a requested id: the agent behavior to run it. */
    record AdoptAgent(long handle, Behavior<RdmaProtocol.ConnectionCommand> agent) implements Command {
    }

    /** The system shuts down: every open connection quiesces as Close does; {@code replyTo} hears when all have. */
    record CloseConnections(ActorRef<Done> replyTo) implements Command {
    }

    /** A connection told {@link ConnectionProtocol.CloseAtShutdown} quiesced or ended, or was not open. */
    record ClosedAtShutdown(ActorRef<?> connection) implements Command {
    }

    private record Pumped(CmEvent event) implements Command {
    }

    /** A child that owned {@code handle} stopped; the handle may already belong to a newer id. */
    private record Stopped(long handle, ActorRef<?> owner) implements Command {
    }

    private final Fabric fabric;
    private final EventChannel channel;
    private final EventPump<CmEvent> pump;
    private final RdmaSettings settings;
    private final Devices devices;
    private final Map<Long, Consumer<CmEvent>> routes = new HashMap<>();
    /** Which actor each route belongs to: rdma-core reuses a destroyed id's address for the next id. */
    private final Map<Long, ActorRef<?>> owners = new HashMap<>();
    /** The connection actors on this channel, connectors and agents: a shutdown quiesces each. */
    private final Set<ActorRef<RdmaProtocol.ConnectionCommand>> connections = new HashSet<>();
    /** Connections the shutdown waits for, and who hears when none is left. */
    private final Set<ActorRef<?>> closingAtShutdown = new HashSet<>();
    private ActorRef<Done> shutdownWaiter;
    /** Makes child names unique, where a reused handle would repeat one whose actor is still stopping. */
    private long spawned;
    /** Events for requested ids whose agent is not running yet. */
    private final Map<Long, List<CmEvent>> held = new HashMap<>();
    /**
     * Requested ids no agent took and no listener refused yet, recorded on the pump's thread: one
     * whose event is still in the mailbox when this actor stops is refused in PostStop too.
     */
    private final Set<Long> requested = ConcurrentHashMap.newKeySet();

    /**
     * Runs {@code channel} (created by the caller, so it exists once this returns) and closes it on
     * stop. A failure restarts it on the same channel: its listeners and connections stop (their
     * handlers hear Unbound or Disconnected(ErrorClosed)) and new commands are served again.
     */
    static Behavior<Command> create(Fabric fabric, EventChannel channel, RdmaSettings settings,
                                    Devices devices) {
        return Behaviors.supervise(Behaviors.<Command>setup(ctx -> new CmEventActor(ctx, fabric, channel, settings,
                devices))).onFailure(SupervisorStrategy.restart().withLimit(10, Duration.ofMinutes(1)));
    }

    private CmEventActor(ActorContext<Command> ctx, Fabric fabric, EventChannel channel, RdmaSettings settings,
                         Devices devices) {
        super(ctx);
        this.fabric = fabric;
        this.settings = settings;
        this.devices = devices;
        this.channel = channel;
        ActorRef<Command> self = ctx.getSelf();
        this.pump = EventPump.start(RdmaManager.threadPrefix(ctx.getSystem()) + "cm", channel, e -> {
            if (e instanceof CmEvent.ConnectRequest r) {
                requested.add(r.id());
            }
            self.tell(new Pumped(e));
        }, CmEvent.ChannelFailed::new);
    }

    @Override
    public Receive<Command> createReceive() {
        return newReceiveBuilder()
                .onMessage(StartListener.class, this::onStartListener)
                .onMessage(StartConnector.class, this::onStartConnector)
                .onMessage(StartMulticast.class, this::onStartMulticast)
                .onMessage(AdoptAgent.class, this::onAdoptAgent)
                .onMessage(RequestRefused.class, r -> {
                    held.remove(r.handle());
                    requested.remove(r.handle());
                    return this;
                })
                .onMessage(Pumped.class, p -> onEvent(p.event()))
                .onMessage(Stopped.class, s -> {
                    if (owners.get(s.handle()) == s.owner()) {
                        owners.remove(s.handle());
                        routes.remove(s.handle());
                        held.remove(s.handle());
                    }
                    connections.remove(s.owner());
                    return closedAtShutdown(s.owner());
                })
                .onMessage(CloseConnections.class, this::onCloseConnections)
                .onMessage(ClosedAtShutdown.class, c -> closedAtShutdown(c.connection()))
                .onSignal(PreRestart.class, s -> {
                    pump.close();
                    drainRequests(); // the listeners stopped: their requests go with them
                    requested.forEach(this::refuseQuietly);
                    return this;
                })
                .onSignal(PostStop.class, s -> {
                    pump.close();
                    // requests no agent took (their listener stopped with this actor, their event
                    // was in the mailbox or still in the channel): no channel is destroyed while an
                    // id is on it
                    drainRequests();
                    requested.forEach(this::refuseQuietly);
                    channel.close();
                    return this;
                })
                .build();
    }

    private Behavior<Command> onStartListener(StartListener m) {
        InetSocketAddress bind = m.listen().bind();
        if (bind.isUnresolved()) {
            m.listen().handler().tell(new RdmaProtocol.CommandFailed(m.listen(),
                    new UnknownHostException(bind.getHostString() + ": the host name does not resolve")));
            return this;
        }
        CmId id = fabric.createCmId(channel, PortSpace.TCP);
        try {
            id.bind(m.listen().bind());
            id.listen(m.listen().backlog());
        } catch (RuntimeException e) {
            id.close();
            m.listen().handler().tell(new RdmaProtocol.CommandFailed(m.listen(), e));
            return this;
        }
        RdmaSettings accepted = settings.with(m.listen().options());
        SharedReceiveBuffers shared = null;
        if (m.listen().sharedReceiveQueue()) {
            try {
                shared = new SharedReceiveBuffers(id.device(), accepted, ConnectionBuffers.RECEIVE);
            } catch (RuntimeException e) {
                id.close();
                m.listen().handler().tell(new RdmaProtocol.CommandFailed(m.listen(), e));
                return this;
            }
        }
        ActorRef<RdmaProtocol.ListenerCommand> listener = spawn(ListenerActor.create(id, m.listen(), accepted,
                devices, getContext().getSelf(), shared), "listener-" + id.handle(), id.handle());
        route(id.handle(), listener, e -> listener.tell(new ListenerActor.Event(e)));
        return this;
    }

    private Behavior<Command> onStartConnector(StartConnector m) {
        CmId id = fabric.createCmId(channel, PortSpace.TCP);
        ActorRef<RdmaProtocol.ConnectionCommand> connection = spawn(
                ConnectionActor.connector(id, m.connect(), settings.with(m.connect().options()), devices), "connection-" + id.handle(), id.handle());
        route(id.handle(), connection, e -> connection.tell(new ConnectionProtocol.Cm(e)));
        connections.add(connection);
        return this;
    }

    private Behavior<Command> onCloseConnections(CloseConnections c) {
        shutdownWaiter = c.replyTo();
        closingAtShutdown.addAll(connections);
        for (ActorRef<RdmaProtocol.ConnectionCommand> connection : connections) {
            connection.tell(new ConnectionProtocol.CloseAtShutdown(getContext().getSelf()));
        }
        return closedAtShutdown(null);
    }

    /** {@code connection} quiesced, ended or stopped: the shutdown goes on once none is left. */
    private Behavior<Command> closedAtShutdown(ActorRef<?> connection) {
        closingAtShutdown.remove(connection);
        if (shutdownWaiter != null && closingAtShutdown.isEmpty()) {
            shutdownWaiter.tell(Done.done());
            shutdownWaiter = null;
        }
        return this;
    }

    private Behavior<Command> onStartMulticast(StartMulticast m) {
        CmId id = fabric.createCmId(channel, PortSpace.UDP);
        ActorRef<RdmaProtocol.MulticastCommand> member = spawn(MulticastActor.create(id, m.join(), settings, devices),
                "multicast-" + id.handle(), id.handle());
        route(id.handle(), member, e -> member.tell(new MulticastActor.Cm(e)));
        return this;
    }

    private Behavior<Command> onAdoptAgent(AdoptAgent m) {
        ActorRef<RdmaProtocol.ConnectionCommand> agent = spawn(m.agent(), "connection-" + m.handle(), m.handle());
        route(m.handle(), agent);
        connections.add(agent);
        return this;
    }

    private void route(long handle, ActorRef<?> owner, Consumer<CmEvent> deliver) {
        routes.put(handle, deliver);
        owners.put(handle, owner);
    }

    private void route(long handle, ActorRef<RdmaProtocol.ConnectionCommand> agent) {
        requested.remove(handle);
        route(handle, agent, e -> agent.tell(new ConnectionProtocol.Cm(e)));
        List<CmEvent> early = held.remove(handle);
        if (early != null) {
            early.forEach(e -> agent.tell(new ConnectionProtocol.Cm(e)));
        }
    }

    private <T> ActorRef<T> spawn(Behavior<T> behavior, String name, long handle) {
        ActorRef<T> ref = getContext().spawn(behavior, name + "-" + ++spawned,
                Props.empty().withDispatcherFromConfig(settings.verbsDispatcher()));
        getContext().watchWith(ref, new Stopped(handle, ref));
        return ref;
    }

    private Behavior<Command> onEvent(CmEvent event) {
        if (event instanceof CmEvent.ChannelFailed failed) {
            getContext().getLog().error("CM event channel failed", failed.cause());
            throw new IllegalStateException("the CM event channel failed", failed.cause());
        }
        if (event instanceof CmEvent.ConnectRequest request) {
            Consumer<CmEvent> listener = routes.get(request.listenId());
            if (listener == null) {
                refuse(request.id());
                return this;
            }
            held.put(request.id(), new ArrayList<>());
            listener.accept(event);
            return this;
        }
        Consumer<CmEvent> target = routes.get(event.id());
        if (target != null) {
            target.accept(event);
        } else if (held.containsKey(event.id())) {
            held.get(event.id()).add(event);
        } else {
            getContext().getLog().debug("CM event for an id nobody owns: {}", event);
        }
        return this;
    }

    /** Takes the events the stopped pump left in the channel, recording their requests. */
    private void drainRequests() {
        try {
            for (CmEvent e; (e = channel.await(Duration.ZERO)) != null; ) {
                if (e instanceof CmEvent.ConnectRequest r) {
                    requested.add(r.id());
                }
            }
        } catch (Exception e) {
            getContext().getLog().debug("draining the CM event channel on stopping", e);
        }
    }

    /** A request whose agent never started; one its listener refused is closed already. */
    private void refuseQuietly(long handle) {
        try {
            refuse(handle);
        } catch (RuntimeException e) {
            getContext().getLog().debug("refusing request {} on stopping", handle, e);
        }
    }

    /** A request for a listener that is gone: reject it and destroy its id, as rdma-core requires. */
    private void refuse(long handle) {
        requested.remove(handle);
        CmId id = channel.cmId(handle);
        if (id != null) {
            try {
                id.reject(new byte[0]);
            } finally {
                id.close();
            }
        }
    }
}
