package io.rdmaactors.actors;

import java.util.Optional;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Extension;
import org.apache.pekko.actor.typed.ExtensionId;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.Adapter;

/**
 * The rdma-actors extension: {@code Rdma.get(system).manager()} takes {@link RdmaProtocol.Listen}
 * and {@link RdmaProtocol.Connect}, as Pekko IO's {@code Tcp.get(system).manager()} does.
 */
public final class Rdma implements Extension {

    private static final ExtensionId<Rdma> ID = new ExtensionId<>() {
        @Override
        public Rdma createExtension(ActorSystem<?> system) {
            return new Rdma(system);
        }
    };

    /** The manager's name under the system guardian. */
    static final String MANAGER_NAME = "rdma-manager";

    private final RdmaSettings settings;
    private final ActorRef<RdmaProtocol.ManagerCommand> manager;

    private Rdma(ActorSystem<?> system) {
        this.settings = RdmaSettings.from(system.settings().config());
        // beside the manager, not under it: the commands that reach connections a manager restart
        // stopped are answered too
        system.systemActorOf(ClosedConnections.create(), "rdma-closed-connections", Props.empty());
        this.manager = system.systemActorOf(RdmaManager.create(settings), MANAGER_NAME,
                Props.empty().withDispatcherFromConfig(settings.verbsDispatcher()));
        // Connections end before the user's handlers: the guardian stops those first, and a
        // connection whose handler died closes on its own (disconnect, drain) instead of being
        // released, its Disconnected going to dead letters.
        CoordinatedShutdown.get(system).addActorTerminationTask(CoordinatedShutdown.PhaseBeforeActorSystemTerminate(),
                "rdma-actors-stop", Adapter.toClassic(manager), Optional.of(RdmaManager.Stop.INSTANCE));
    }

    public static Rdma get(ActorSystem<?> system) {
        return ID.apply(system);
    }

    public ActorRef<RdmaProtocol.ManagerCommand> manager() {
        return manager;
    }

    public RdmaSettings settings() {
        return settings;
    }
}
