package io.rdmaactors.actors;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.pekko.Done;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.Identify;
import org.apache.pekko.actor.IgnoreActorRef;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.actor.typed.Extension;
import org.apache.pekko.actor.typed.ExtensionId;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.pattern.Patterns;

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
    private final ActorSystem<?> system;
    /** The handlers the shutdown's stop told that their connection ended. */
    private final Set<ActorRef<?>> toldAtShutdown = ConcurrentHashMap.newKeySet();

    private Rdma(ActorSystem<?> system) {
        this.system = system;
        this.settings = RdmaSettings.from(system.settings().config());
        // beside the manager, not under it: the commands that reach connections a manager restart
        // stopped are answered too
        ClosedConnections.start(system);
        this.manager = system.systemActorOf(RdmaManager.create(settings), MANAGER_NAME,
                Props.empty().withDispatcherFromConfig(settings.verbsDispatcher()));
        // Connections end before the user's handlers: the guardian stops those first, and a
        // connection whose handler died closes on its own (disconnect, drain) instead of being
        // released, its Disconnected going to dead letters.
        CoordinatedShutdown shutdown = CoordinatedShutdown.get(system);
        String phase = CoordinatedShutdown.PhaseBeforeActorSystemTerminate();
        Duration timeout = Duration.ofMillis(shutdown.timeout(phase).toMillis());
        // Open connections first quiesce as Close does, so their peers hear a close, not a failure;
        // within half the phase at most.
        Duration closeTimeout = Duration.ofMillis(Math.min(settings.shutdownCloseTimeout().toMillis(),
                timeout.toMillis() / 2));
        shutdown.addTask(phase, "rdma-actors-stop", () -> {
            long deadline = System.nanoTime() + timeout.toNanos();
            CompletableFuture<Done> managerStopped = quiesceConnections(closeTimeout)
                    .thenCompose(quiesced -> Patterns.gracefulStop(Adapter.toClassic(manager), left(deadline),
                            RdmaManager.Stop.INSTANCE))
                    .toCompletableFuture().thenCompose(stopped -> handlersCaughtUp(deadline));
            // A guardian that stops itself on the Unbound this stop causes (the Pekko IO habit)
            // terminates the system under the task: the watch then never hears the manager's end, nor
            // does the phase's timeout fire, and a JVM exit waited 15 s for coordinated shutdown.
            CompletableFuture<Done> systemTerminated = system.getWhenTerminated().toCompletableFuture();
            return managerStopped.applyToEither(systemTerminated, done -> done);
        });
    }

    /** Completes once every open connection quiesced, or after {@code timeout} (at once for zero). */
    private CompletableFuture<Done> quiesceConnections(Duration timeout) {
        if (timeout.isZero()) {
            return CompletableFuture.completedFuture(Done.done());
        }
        return AskPattern.<RdmaProtocol.ManagerCommand, Done>ask(manager, RdmaManager.CloseConnections::new, timeout,
                system.scheduler()).toCompletableFuture()
                .handleAsync((done, timedOut) -> Done.done(), system.executionContext());
    }

    /**
     * A connection, listener or group member the shutdown stopped told {@code handler} it ended: the
     * shutdown waits until the handler took that.
     */
    void toldAtShutdown(ActorRef<?> handler) {
        // an ignore ref answers no Identify: waiting for it held the system's end for the whole phase
        if (CoordinatedShutdown.get(system).getShutdownReason().isPresent()
                && !IgnoreActorRef.isIgnoreRefPath(handler.path())) {
            toldAtShutdown.add(handler);
        }
    }

    /**
     * Completes once each handler told at the shutdown's stop has taken what it was told (or by
     * {@code deadline}): the guardian's stop of the user's actors is handled before the messages
     * already queued, so a handler that got no thread meanwhile would lose them. An Identify, queued
     * behind them, is answered once it has; a message adapter's goes to the actor owning it, whose
     * mailbox the adapted messages went to.
     *
     * <p>A future converted from Scala runs even its non-async callbacks on the common pool, which
     * on two cores or fewer starts a thread per task: at 10,000 connections those thread starts took
     * 2.4-2.6 s of the phase's 5. Its callbacks here run on the system's dispatcher.
     */
    private CompletableFuture<Done> handlersCaughtUp(long deadline) {
        Duration left = left(deadline);
        CompletableFuture<?>[] answers = toldAtShutdown.stream().map(handler -> {
            org.apache.pekko.actor.ActorRef classic = Adapter.toClassic(handler);
            Identify identify = new Identify(Done.done());
            return (classic.path().name().startsWith("$$")
                    ? Patterns.ask(Adapter.toClassic(system).actorSelection(classic.path().parent()), identify, left)
                    : Patterns.ask(classic, identify, left)).toCompletableFuture()
                    .handleAsync((identity, timedOut) -> null, system.executionContext());
        }).toArray(CompletableFuture[]::new);
        return CompletableFuture.allOf(answers).thenApply(all -> Done.done());
    }

    private static Duration left(long deadline) {
        return Duration.ofNanos(Math.max(deadline - System.nanoTime(), 1_000_000));
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

    /**
     * The data path's dispatcher ({@code rdma-actors.data-path}), for handlers that want the
     * shortest round trips: spawned with {@code ctx.spawn(handler, name,
     * Rdma.get(system).dispatcher())}, a handler and its QP actor run on threads that poll for
     * work before they park, so no thread is woken between them.
     */
    public DispatcherSelector dispatcher() {
        return DispatcherSelector.fromConfig(RdmaSettings.DATA_PATH_DISPATCHER);
    }
}
