package io.rdmaactors.examples;

import io.rdmaactors.actors.Rdma;
import io.rdmaactors.actors.RdmaProtocol;
import io.rdmaactors.actors.RdmaProtocol.ConnectionCommand;
import io.rdmaactors.actors.RdmaProtocol.ConnectionEvent;
import io.rdmaactors.actors.RdmaProtocol.ListenerCommand;
import io.rdmaactors.actors.RdmaProtocol.ListenerEvent;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PreRestart;
import org.apache.pekko.actor.typed.SupervisorStrategy;
import org.apache.pekko.actor.typed.Terminated;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.util.ByteString;
import org.slf4j.event.Level;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * A long-running echo server under a supervising guardian. Clients come and go, a few at a time;
 * every third asks its session handler to die. The handler's death ends that connection only (its
 * client hears that its peer failed, ErrorClosed(PeerFailed)), and the server carries on serving the
 * clients after it. With -s it serves clients of other processes until SIGTERM, printing a status
 * line every --status seconds, then stops accepting, gives open connections a bounded time to
 * finish, and exits 0; -c runs the clients against it. With neither, both run here until --clients were served or --seconds passed.
 */
@Command(name = "supervised-server",
        description = "An echo server under a supervising guardian; handler death closes one connection, the server carries on.")
public final class SupervisedServer implements Callable<Integer> {

    private static final String NAME = "supervised-server";
    private static final int CONCURRENT_CLIENTS = 3;
    private static final int ROUNDS = 5;
    private static final int SIZE = 64;
    /** What a client sends to make its session handler fail; no echo is ever this short. */
    private static final ByteString DIE = ByteString.fromString("die");
    /** How long a server on SIGTERM waits for its open connections to finish. */
    private static final Duration DRAIN = Duration.ofSeconds(10);
    /** How often a draining server looks whether its connections have finished. */
    private static final Duration DRAIN_CHECK = Duration.ofMillis(100);

    @Mixin
    RdmaFlags flags;

    @Option(names = "--clients", defaultValue = "12", description = "clients to run at most (default ${DEFAULT-VALUE})")
    int clients;

    @Option(names = "--seconds", defaultValue = "5",
            description = "seconds to start new clients for at most (default ${DEFAULT-VALUE})")
    int seconds;

    @Option(names = "--status", defaultValue = "5",
            description = "seconds between a server's status lines (default ${DEFAULT-VALUE})")
    int status;

    private interface Msg {
    }

    private record ServerListening(InetSocketAddress address, ActorRef<ListenerCommand> listener) implements Msg {
    }

    /** A client ended as it meant to ({@code problem} null) or not. */
    private record ClientFinished(boolean killedItsHandler, boolean startedAfterADeath, String problem)
            implements Msg {
    }

    /** Time for a server's status line. */
    private record StatusDue() implements Msg {
    }

    /** SIGTERM: stop accepting and let the open connections finish. */
    private record Drain() implements Msg {
    }

    private record DrainCheck() implements Msg {
    }

    /** What a server's status line tells, counted by its listener and sessions. */
    private static final class Traffic {
        final AtomicInteger open = new AtomicInteger();
        final AtomicLong served = new AtomicLong();
        final AtomicLong messages = new AtomicLong();
        final AtomicLong errors = new AtomicLong();
    }

    @Override
    public Integer call() {
        flags.check("--clients", clients, 1, 100_000);
        flags.check("--seconds", seconds, 1, 86_400);
        flags.check("--status", status, 1, 86_400);
        // the server drains on SIGTERM itself: Pekko's own hook would stop the actor system under it
        return Program.run(NAME, flags, "pekko.coordinated-shutdown.run-by-jvm-shutdown-hook = off\n",
                Duration.ofSeconds(seconds + 30L), this::guardian);
    }

    /**
     * Supervises the server (restarted if it fails) unless this process is only the client, and
     * lets clients come and go within the bounds unless it is only the server.
     */
    private Behavior<Msg> guardian(Program.Result result) {
        if (flags.role() == RdmaFlags.Role.CLIENT) {
            return clientRuns(flags.serverAddress(), result);
        }
        return Behaviors.setup(ctx -> {
            Traffic traffic = new Traffic();
            ctx.spawn(Behaviors.supervise(server(flags.bind(), ctx.getSelf(), traffic, result))
                    .onFailure(SupervisorStrategy.restart()), "server");
            return Behaviors.receive(Msg.class)
                    .onMessage(ServerListening.class, l -> {
                        if (flags.role() == RdmaFlags.Role.BOTH) {
                            return clientRuns(l.address(), result);
                        }
                        Program.announce(NAME, l.address());
                        Sigterm.onSigterm(() -> ctx.getSelf().tell(new Drain()), DRAIN);
                        return serving(l.listener(), traffic, result);
                    })
                    .build();
        });
    }

    /** Prints the status line every --status seconds until SIGTERM, then drains. */
    private Behavior<Msg> serving(ActorRef<ListenerCommand> firstListener, Traffic traffic, Program.Result result) {
        return Behaviors.withTimers(timers -> {
            timers.startTimerAtFixedRate(StatusDue.class, new StatusDue(), Duration.ofSeconds(status));
            long start = System.nanoTime();
            long[] counted = {0, start};
            AtomicReference<ActorRef<ListenerCommand>> listener = new AtomicReference<>(firstListener);
            long[] drainDeadline = {0};
            return Behaviors.receive(Msg.class)
                    .onMessage(ServerListening.class, l -> {
                        listener.set(l.listener());
                        return Behaviors.same();
                    })
                    .onMessage(StatusDue.class, s -> {
                        long now = System.nanoTime();
                        long messages = traffic.messages.get();
                        System.out.printf("%s server: %d connections open, %.0f msg/s, %d errors%n", NAME,
                                traffic.open.get(), (messages - counted[0]) * 1e9 / (now - counted[1]),
                                traffic.errors.get());
                        counted[0] = messages;
                        counted[1] = now;
                        return Behaviors.same();
                    })
                    .onMessage(Drain.class, d -> {
                        listener.get().tell(new RdmaProtocol.Unbind());
                        timers.cancel(StatusDue.class);
                        System.out.println(NAME + " server: SIGTERM: accepting no more; waiting up to "
                                + DRAIN.toSeconds() + " s for " + traffic.open.get() + " open connections");
                        drainDeadline[0] = System.nanoTime() + DRAIN.toNanos();
                        timers.startTimerAtFixedRate(new DrainCheck(), DRAIN_CHECK);
                        return Behaviors.same();
                    })
                    .onMessage(DrainCheck.class, c -> {
                        if (traffic.open.get() == 0 || System.nanoTime() > drainDeadline[0]) {
                            result.succeed(String.format("%s server: stopped on SIGTERM after %.1f s: served %d"
                                    + " clients, %d errors; %d connections still open were closed", NAME,
                                    (System.nanoTime() - start) / 1e9, traffic.served.get(), traffic.errors.get(),
                                    traffic.open.get()));
                        }
                        return Behaviors.same();
                    })
                    .build();
        });
    }

    /** Runs the clients against {@code firstAddress}, a few at a time, and reports how they ended. */
    private Behavior<Msg> clientRuns(InetSocketAddress firstAddress, Program.Result result) {
        return Behaviors.setup(ctx -> {
            long start = System.nanoTime();
            long deadline = start + Duration.ofSeconds(seconds).toNanos();
            InetSocketAddress[] server = {firstAddress};
            int[] started = {0};
            int[] finished = {0};
            int[] deaths = {0};
            int[] servedAfterADeath = {0};
            Runnable startClient = () -> {
                int id = started[0]++;
                ctx.spawn(client(server[0], id % 3 == 2, deaths[0] > 0, ctx.getSelf()), "client-" + id);
            };
            while (started[0] < Math.min(CONCURRENT_CLIENTS, clients)) {
                startClient.run();
            }
            return Behaviors.receive(Msg.class)
                    .onMessage(ServerListening.class, l -> {
                        // a restarted server listens anew, on another port when it took a free one
                        server[0] = l.address();
                        return Behaviors.same();
                    })
                    .onMessage(ClientFinished.class, f -> {
                        if (f.problem() != null) {
                            return result.failed(f.problem());
                        }
                        finished[0]++;
                        deaths[0] += f.killedItsHandler() ? 1 : 0;
                        servedAfterADeath[0] += f.startedAfterADeath() && !f.killedItsHandler() ? 1 : 0;
                        if (started[0] < clients && System.nanoTime() < deadline) {
                            startClient.run();
                        } else if (finished[0] == started[0]) {
                            result.succeed(String.format("%s: served %d clients in %.1f s, %d at a time; %d handlers"
                                    + " died, each closing only its own connection; %d clients served after the"
                                    + " first death", NAME, finished[0], (System.nanoTime() - start) / 1e9,
                                    CONCURRENT_CLIENTS, deaths[0], servedAfterADeath[0]));
                        }
                        return Behaviors.same();
                    })
                    .build();
        });
    }

    /**
     * Listens and gives each connection a session of its own. A session that fails is stopped (its
     * connection closes); should the server itself fail, the guardian restarts it and the restarted
     * server listens anew, so the old listener is unbound first.
     */
    private static Behavior<ListenerEvent> server(InetSocketAddress bind, ActorRef<Msg> guardian, Traffic traffic,
                                                  Program.Result result) {
        return Behaviors.setup(ctx -> {
            Rdma.get(ctx.getSystem()).manager().tell(new RdmaProtocol.Listen(bind, ctx.getSelf(), 16));
            return Behaviors.receive(ListenerEvent.class)
                    .onMessage(RdmaProtocol.Listening.class, l -> {
                        guardian.tell(new ServerListening(l.localAddress(), l.listener()));
                        return listening(l.listener(), traffic, result);
                    })
                    .onAnyMessage(e -> result.unexpected("server", e))
                    .build();
        });
    }

    private static Behavior<ListenerEvent> listening(ActorRef<ListenerCommand> listener, Traffic traffic,
                                                     Program.Result result) {
        return Behaviors.setup(ctx -> Behaviors.receive(ListenerEvent.class)
                .onMessage(RdmaProtocol.ConnectionRequested.class, r -> {
                    ActorRef<ConnectionEvent> session = ctx.spawnAnonymous(Behaviors.supervise(session(traffic))
                            .onFailure(SupervisorStrategy.stop().withLogLevel(Level.INFO)));
                    // a session's end, however it ends, is its Terminated here
                    ctx.watch(session);
                    traffic.open.incrementAndGet();
                    traffic.served.incrementAndGet();
                    r.connection().tell(new RdmaProtocol.Accept(session, null));
                    return Behaviors.same();
                })
                .onMessage(RdmaProtocol.Unbound.class, u -> Behaviors.same())
                .onSignal(Terminated.class, t -> {
                    traffic.open.decrementAndGet();
                    return Behaviors.same();
                })
                .onSignal(PreRestart.class, s -> {
                    listener.tell(new RdmaProtocol.Unbind());
                    return Behaviors.same();
                })
                .onAnyMessage(e -> result.unexpected("server", e))
                .build());
    }

    /** Echoes each message, and fails when asked to; a failed connection counts as an error too. */
    private static Behavior<ConnectionEvent> session(Traffic traffic) {
        return Behaviors.receive(ConnectionEvent.class)
                .onMessage(RdmaProtocol.Connected.class, c -> Behaviors.receive(ConnectionEvent.class)
                        .onMessage(RdmaProtocol.Received.class, r -> {
                            if (r.data().equals(DIE)) {
                                traffic.errors.incrementAndGet();
                                throw new IllegalStateException("the client asked this session handler to die");
                            }
                            traffic.messages.incrementAndGet();
                            c.connection().tell(RdmaProtocol.Send.of(r.data(), null));
                            return Behaviors.same();
                        })
                        .onMessage(RdmaProtocol.Disconnected.class, d -> {
                            if (d.reason() instanceof RdmaProtocol.ErrorClosed) {
                                traffic.errors.incrementAndGet();
                            }
                            return Behaviors.stopped();
                        })
                        .build())
                .build();
    }

    /** A few verified echoes, then a clean disconnect, or a request that kills the session handler. */
    private Behavior<ConnectionEvent> client(InetSocketAddress server, boolean killHandler, boolean afterADeath,
                                             ActorRef<Msg> guardian) {
        return Behaviors.setup(ctx -> {
            String name = ctx.getSelf().path().name();
            Rdma.get(ctx.getSystem()).manager().tell(RdmaProtocol.Connect.to(server, ctx.getSelf()).withTimeout(Program.CONNECT_TIMEOUT));
            int[] round = {0};
            return Behaviors.receive(ConnectionEvent.class)
                    .onMessage(RdmaProtocol.Connected.class, c -> {
                        ActorRef<ConnectionCommand> connection = c.connection();
                        connection.tell(RdmaProtocol.Send.of(Payload.of(0, SIZE), null));
                        return Behaviors.receive(ConnectionEvent.class)
                                .onMessage(RdmaProtocol.Received.class, r -> {
                                    if (Payload.check(r.data(), SIZE) != round[0]) {
                                        return finish(guardian, name + ": echo " + round[0] + " came back wrong");
                                    }
                                    if (++round[0] < ROUNDS) {
                                        connection.tell(RdmaProtocol.Send.of(Payload.of(round[0], SIZE), null));
                                    } else if (killHandler) {
                                        connection.tell(RdmaProtocol.Send.of(DIE));
                                    } else {
                                        connection.tell(new RdmaProtocol.Close());
                                    }
                                    return Behaviors.same();
                                })
                                // the handler it kills may take the connection down before the Send's ack comes back
                                .onMessage(RdmaProtocol.CommandFailed.class, f -> killHandler
                                        && f.command() instanceof RdmaProtocol.Send send && send.data().equals(DIE)
                                        ? Behaviors.same() : finish(guardian, name + ": " + Program.describe(f)))
                                .onMessage(RdmaProtocol.Disconnected.class, d -> {
                                    // a killed handler's connection ends without a close: its client hears a failure
                                    boolean expected = round[0] == ROUNDS && (killHandler
                                            ? d.reason() instanceof RdmaProtocol.ErrorClosed e
                                                    && e.cause() instanceof RdmaProtocol.PeerFailed
                                            : d.reason() instanceof RdmaProtocol.Closed);
                                    guardian.tell(new ClientFinished(killHandler, afterADeath,
                                            expected ? null : name + ": " + Program.describe(d) + " after " + round[0] + " echoes"));
                                    return Behaviors.stopped();
                                })
                                .onAnyMessage(e -> finish(guardian, name + ": " + Program.describe(e)))
                                .build();
                    })
                    .onAnyMessage(e -> finish(guardian, name + ": " + Program.describe(e)))
                    .build();
        });
    }

    private static Behavior<ConnectionEvent> finish(ActorRef<Msg> guardian, String problem) {
        guardian.tell(new ClientFinished(false, false, problem));
        return Behaviors.stopped();
    }
}
