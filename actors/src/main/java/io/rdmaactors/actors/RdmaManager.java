package io.rdmaactors.actors;

import io.rdmaactors.verbs.Device;
import io.rdmaactors.verbs.Fabric;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.SupervisorStrategy;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;

/**
 * The entry point: opens the configured fabric, runs one {@link DeviceActor} per device and the
 * {@link CmEventActor} of the CM event channel, and hands Listen and Connect to it. It may restart:
 * its children stop, freeing what they own, then the new incarnation closes the old fabric and
 * opens a new one. (PreRestart comes before the children stop: closing the fabric there would pull
 * resources from under actors still running.)
 */
final class RdmaManager extends AbstractBehavior<RdmaProtocol.ManagerCommand> {

    private final Fabric fabric;
    private final Map<String, CompletionPoller> pollers = new HashMap<>();
    private final Map<String, SharedReceiveBuffers> receiveQueues = new HashMap<>();
    private final ActorRef<CmEventActor.Command> cmEvents;

    static Behavior<RdmaProtocol.ManagerCommand> create(RdmaSettings settings) {
        // what the incarnation that failed opened, closed by the next one once its children stopped
        AtomicReference<RdmaManager> previous = new AtomicReference<>();
        return Behaviors.supervise(Behaviors.setup((ActorContext<RdmaProtocol.ManagerCommand> ctx) -> {
            RdmaManager old = previous.getAndSet(null);
            if (old != null) {
                old.release();
            }
            Fabric fabric;
            try {
                Map<String, String> options = new HashMap<>(settings.fabricOptions());
                options.putIfAbsent(THREADS_PREFIX_OPTION, threadPrefix(ctx.getSystem()));
                fabric = Fabric.open(settings.fabric(), options);
            } catch (RuntimeException e) {
                ctx.getLog().error("rdma-actors cannot open the {} fabric", settings.fabric(), e);
                return unavailable(e);
            }
            RdmaManager manager = new RdmaManager(ctx, settings, fabric);
            previous.set(manager);
            return manager;
        })).onFailure(SupervisorStrategy.restart());
    }

    /** Stops the manager and so every resource under it: sent by the actor system's coordinated shutdown. */
    enum Stop implements RdmaProtocol.ManagerCommand {
        INSTANCE
    }

    /**
     * Quiesces every open connection as Close does (what was sent completes, the closing notice
     * goes out), then tells {@code replyTo}: sent by the actor system's coordinated shutdown
     * before {@link Stop}.
     */
    record CloseConnections(ActorRef<Done> replyTo) implements RdmaProtocol.ManagerCommand {
    }

    private enum CmEventsStopped implements RdmaProtocol.ManagerCommand {
        INSTANCE
    }

    /** The failure a CrashManager asks for. */
    static final class ManagerCrashed extends RuntimeException {
        ManagerCrashed(String why) {
            super("crashed on request: " + why, null, false, false);
        }
    }

    /** The fabric option that starts the names of a fabric's own threads (the soft fabric's I/O, timer and wire). */
    static final String THREADS_PREFIX_OPTION = "threads.prefix";

    /**
     * What the names of every thread rdma-actors starts for {@code system} begin with: pumps,
     * pollers and the fabric's own, so that two systems in one JVM tell their threads apart.
     */
    static String threadPrefix(ActorSystem<?> system) {
        return "rdma-" + system.name() + "-";
    }

    /** Without a fabric every command fails at once, saying why, rather than going to dead letters. */
    private static Behavior<RdmaProtocol.ManagerCommand> unavailable(RuntimeException cause) {
        return Behaviors.receive(RdmaProtocol.ManagerCommand.class)
                .onMessage(Stop.class, s -> Behaviors.stopped())
                .onMessage(CloseConnections.class, c -> {
                    c.replyTo().tell(Done.done());
                    return Behaviors.same();
                })
                .onMessage(RdmaProtocol.ManagerCommand.class, m -> {
                    refuse(m, cause);
                    return Behaviors.same();
                })
                .build();
    }

    /**
     * Fails a Listen, Connect or JoinMulticast that will not be carried out, to its handler.
     *
     * @return whether {@code command} was one of those
     */
    static boolean refuse(Object command, RuntimeException cause) {
        if (command instanceof RdmaProtocol.Listen l) {
            l.handler().tell(new RdmaProtocol.CommandFailed(l, cause));
        } else if (command instanceof RdmaProtocol.Connect c) {
            c.handler().tell(new RdmaProtocol.ConnectFailed(c.remote(), new RdmaProtocol.DeviceError(cause)));
        } else if (command instanceof RdmaProtocol.JoinMulticast j) {
            j.handler().tell(new RdmaProtocol.CommandFailed(j, cause));
        } else {
            return false;
        }
        return true;
    }

    private RdmaManager(ActorContext<RdmaProtocol.ManagerCommand> ctx, RdmaSettings settings, Fabric fabric) {
        super(ctx);
        this.fabric = fabric;
        Props props = Props.empty().withDispatcherFromConfig(settings.verbsDispatcher());
        Map<String, ActorRef<DeviceActor.Command>> devices = new HashMap<>();
        try {
            for (Device device : fabric.devices()) {
                pollers.put(device.name(), new CompletionPoller(device, settings.completionPollers(),
                        threadPrefix(ctx.getSystem())));
                devices.put(device.name(), ctx.spawn(DeviceActor.create(device), "device-" + device.name(), props));
                if (settings.receiveQueue().equals(RdmaSettings.PER_DEVICE)) {
                    receiveQueues.put(device.name(), new SharedReceiveBuffers(device, settings, ConnectionBuffers.RECEIVE));
                }
            }
        } catch (RuntimeException e) {
            release();
            throw e;
        }
        this.cmEvents = ctx.spawn(CmEventActor.create(fabric, fabric.createEventChannel(), settings,
                new Devices(devices, pollers, receiveQueues)), "cm-events", props);
    }

    /**
     * Once every child stopped (their QPs and CQs are gone): the devices' shared receive queues, the
     * completion channels, then the fabric.
     */
    private void release() {
        receiveQueues.values().forEach(SharedReceiveBuffers::release);
        receiveQueues.clear();
        pollers.values().forEach(CompletionPoller::close);
        pollers.clear();
        fabric.close();
    }

    @Override
    public Receive<RdmaProtocol.ManagerCommand> createReceive() {
        return newReceiveBuilder()
                .onMessage(RdmaProtocol.Listen.class, l -> {
                    cmEvents.tell(new CmEventActor.StartListener(l));
                    return this;
                })
                .onMessage(RdmaProtocol.Connect.class, c -> {
                    cmEvents.tell(new CmEventActor.StartConnector(c));
                    return this;
                })
                .onMessage(RdmaProtocol.JoinMulticast.class, j -> {
                    cmEvents.tell(new CmEventActor.StartMulticast(j));
                    return this;
                })
                .onMessage(CloseConnections.class, c -> {
                    cmEvents.tell(new CmEventActor.CloseConnections(c.replyTo()));
                    return this;
                })
                .onMessage(Stop.class, s -> {
                    // the CM event actor first: its connections unregister their QPs from the
                    // device actors, dead letters if those stopped beside them
                    getContext().watchWith(cmEvents, CmEventsStopped.INSTANCE);
                    getContext().stop(cmEvents);
                    return this;
                })
                .onMessage(CmEventsStopped.class, s -> Behaviors.stopped())
                .onMessage(RdmaProtocol.GetFabric.class, g -> {
                    g.replyTo().tell(fabric);
                    return this;
                })
                .onMessage(RdmaProtocol.CrashManager.class, c -> {
                    throw new ManagerCrashed(c.why());
                })
                .onSignal(PostStop.class, s -> {
                    release();
                    return this;
                })
                .build();
    }
}
