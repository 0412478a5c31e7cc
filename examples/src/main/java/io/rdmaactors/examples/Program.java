package io.rdmaactors.examples;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValueFactory;
import io.rdmaactors.actors.Rdma;
import io.rdmaactors.actors.RdmaProtocol;
import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.VerbsException;
import io.rdmaactors.verbs.WcStatus;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiConsumer;
import java.util.function.Function;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.slf4j.LoggerFactory;

/**
 * Runs one program: its guardian in a fresh actor system on the chosen fabric, until one of its
 * actors reports the result or a failure; then the actor system is shut down. A failure leaves as
 * a {@link Failure}, which the command line prints as one line.
 */
final class Program {

    /** How long a client waits for Connected. */
    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);
    /** The largest message the programs send: a registered buffer per slot, so keep it modest. */
    static final int MAX_SIZE = 1 << 20;

    private static final Duration SHUTDOWN = Duration.ofSeconds(10);
    /** How long the manager may take to open its fabric. */
    private static final Duration FABRIC_OPEN = Duration.ofSeconds(5);

    private Program() {
    }

    /** Why a program failed, in one line for its user; the cause, if any, is shown with -v. */
    static final class Failure extends RuntimeException {
        Failure(String why, Throwable cause) {
            super(why, cause);
        }
    }

    /** Where a program's actors report how it ended; the first report wins, from any thread. */
    static final class Result {
        private final CompletableFuture<String> line = new CompletableFuture<>();
        private final RdmaFlags.Role role;
        private String clientLine;
        private String serverLine;

        Result(RdmaFlags.Role role) {
            this.role = role;
        }

        /**
         * One side's line: the program succeeds once each side this process plays has reported,
         * the client's line first when it plays both.
         */
        synchronized void report(RdmaFlags.Role side, String report) {
            if (side == RdmaFlags.Role.CLIENT) {
                clientLine = report;
            } else {
                serverLine = report;
            }
            if (role != RdmaFlags.Role.BOTH) {
                succeed(report);
            } else if (clientLine != null && serverLine != null) {
                succeed(clientLine + System.lineSeparator() + serverLine);
            }
        }

        void succeed(String report) {
            line.complete(report);
        }

        void fail(String why) {
            line.completeExceptionally(new Failure(why, null));
        }

        /** Fails the program and stops the reporting actor: the behaviour for events no program expects. */
        <T> Behavior<T> failed(String why) {
            fail(why);
            return Behaviors.stopped();
        }

        /** {@link #failed} for an event {@code who} did not expect, told as a sentence. */
        <T> Behavior<T> unexpected(String who, Object event) {
            line.completeExceptionally(new Failure(who + ": " + describe(event), cause(event)));
            return Behaviors.stopped();
        }
    }

    /**
     * Runs {@code guardian} with {@code config} over rdma-actors' defaults and prints its report.
     * A client or a one-process run has {@code limit} to finish; a server waits for its clients.
     */
    static <T> int run(String name, RdmaFlags flags, String config, Duration limit,
                       Function<Result, Behavior<T>> guardian) {
        // the actor system would only log why its fabric cannot open: find out first, to say it in one line
        open(flags.fabric).close();
        Config merged = ConfigFactory.parseString(config)
                .withValue("rdma-actors.fabric", ConfigValueFactory.fromAnyRef(flags.fabric))
                .withFallback(ConfigFactory.load());
        // SLF4J set up before Pekko's threads log, or it replays their first calls with a warning
        LoggerFactory.getILoggerFactory();
        Result result = new Result(flags.role());
        ActorSystem<T> system = ActorSystem.create(guardian.apply(result), name, merged);
        system.getWhenTerminated().thenRun(() -> result.fail("the actor system stopped before the program ended"));
        AskPattern.<RdmaProtocol.ManagerCommand, Fabric>ask(Rdma.get(system).manager(), RdmaProtocol.GetFabric::new,
                FABRIC_OPEN, system.scheduler()).whenComplete((fabric, failure) -> {
                    if (failure != null) {
                        result.fail("rdma-actors did not open the " + flags.fabric + " fabric (-v shows why)");
                    }
                });
        try {
            String report = flags.role() == RdmaFlags.Role.SERVER ? result.line.get()
                    : result.line.get(limit.toMillis(), TimeUnit.MILLISECONDS);
            System.out.println(report);
            return 0;
        } catch (ExecutionException e) {
            throw (Failure) e.getCause();
        } catch (TimeoutException e) {
            throw new Failure("no result within " + limit, null);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Failure("interrupted", e);
        } finally {
            system.terminate();
            system.getWhenTerminated().toCompletableFuture().completeOnTimeout(null, SHUTDOWN.toMillis(),
                    TimeUnit.MILLISECONDS).join();
        }
    }

    /**
     * Opens a fabric that has a device, or fails saying how to get one: rdma-core without a device
     * only fails at the first CM call, with ENODEV, which says nothing of Soft-RoCE.
     */
    static Fabric open(String provider) {
        Fabric fabric;
        try {
            fabric = Fabric.open(provider, Map.of());
        } catch (VerbsException e) {
            throw new Failure("cannot open the " + provider + " fabric: " + e.getMessage(), e);
        }
        if (fabric.devices().isEmpty()) {
            fabric.close();
            throw new Failure(noDevice(provider), null);
        }
        return fabric;
    }

    /** The one line for a host without an RDMA device, with the two ways to get on. */
    static String noDevice(String provider) {
        return "no RDMA device found on the " + provider + " fabric (ibv_devinfo: No IB devices found); add a"
                + " Soft-RoCE device (rdma link add rxe0 type rxe netdev <interface>) or run with --fabric soft";
    }

    /**
     * The guardian of a client/server program: listens on -a:-p and serves one client, as perftest's
     * servers do, when this process is the server; beside the client in one process, it listens on
     * any free port, starts the client there and gives every request an agent. {@code agent} is
     * told whether it reports the server's result.
     */
    static Behavior<RdmaProtocol.ListenerEvent> listener(String name, RdmaFlags flags, Result result,
            Function<InetSocketAddress, Behavior<RdmaProtocol.ConnectionEvent>> client,
            Function<Boolean, Behavior<RdmaProtocol.ConnectionEvent>> agent) {
        boolean alone = flags.role() == RdmaFlags.Role.SERVER;
        boolean[] serving = {false};
        // on the data path's threads, not Pekko's default dispatcher: its 8 threads on a machine of
        // fewer cores wake one another at each hand-off and wait milliseconds for a core (tuning.md)
        return listener(name, flags, result, 8, false,
                (ctx, server) -> ctx.spawn(client.apply(server), "client", Rdma.get(ctx.getSystem()).dispatcher()),
                (ctx, request) -> {
                    if (serving[0]) {
                        request.connection().tell(new RdmaProtocol.Reject(null));
                    } else {
                        serving[0] = alone;
                        request.connection().tell(new RdmaProtocol.Accept(ctx.spawnAnonymous(agent.apply(alone),
                                Rdma.get(ctx.getSystem()).dispatcher()), null));
                    }
                });
    }

    /**
     * A server's listener: on -a:-p, announced, when this process is the server; beside its clients
     * in one process, on any free port, where it starts them. {@code answer} accepts or rejects each
     * request; with {@code sharedReceiveQueue} all connections receive from one SRQ.
     */
    static Behavior<RdmaProtocol.ListenerEvent> listener(String name, RdmaFlags flags, Result result, int backlog,
            boolean sharedReceiveQueue, BiConsumer<ActorContext<RdmaProtocol.ListenerEvent>, InetSocketAddress> startClients,
            BiConsumer<ActorContext<RdmaProtocol.ListenerEvent>, RdmaProtocol.ConnectionRequested> answer) {
        return Behaviors.setup(ctx -> {
            Rdma.get(ctx.getSystem()).manager().tell(new RdmaProtocol.Listen(flags.bind(), ctx.getSelf(), backlog,
                    sharedReceiveQueue));
            InetSocketAddress[] bound = {null};
            return Behaviors.receive(RdmaProtocol.ListenerEvent.class)
                    .onMessage(RdmaProtocol.Listening.class, l -> {
                        bound[0] = l.localAddress();
                        if (flags.role() == RdmaFlags.Role.SERVER) {
                            announce(name, l.localAddress());
                        } else {
                            startClients.accept(ctx, l.localAddress());
                        }
                        return Behaviors.same();
                    })
                    .onMessage(RdmaProtocol.ConnectionRequested.class, r -> {
                        answer.accept(ctx, r);
                        return Behaviors.same();
                    })
                    .onMessage(RdmaProtocol.Unbound.class, u -> {
                        String where = bound[0] == null ? "" : " on " + bound[0].getAddress().getHostAddress() + ":"
                                + bound[0].getPort();
                        if (CoordinatedShutdown.get(ctx.getSystem()).getShutdownReason().isPresent()) {
                            // SIGTERM, or the program's end: the listener goes with the actor system
                            result.succeed(name + " server" + where + ": stopped, the process is shutting down");
                            return Behaviors.stopped();
                        }
                        return result.failed("the listener" + where + " stopped");
                    })
                    .onAnyMessage(e -> result.unexpected("listener", e))
                    .build();
        });
    }

    /** A server's first line: where it listens, so a client in another terminal (or a test) can find it. */
    static void announce(String name, InetSocketAddress where) {
        System.out.println(name + " server: listening on " + where.getAddress().getHostAddress() + ":" + where.getPort());
    }

    /** An event as a sentence: why the connection failed or closed, or what was refused. */
    static String describe(Object event) {
        if (event instanceof RdmaProtocol.ConnectFailed f) {
            return "connection to " + f.remote().getAddress().getHostAddress() + ":" + f.remote().getPort() + " "
                    + failure(f.reason());
        }
        if (event instanceof RdmaProtocol.Disconnected d) {
            return d.reason() instanceof RdmaProtocol.PeerClosed ? "the peer closed the connection"
                    : d.reason() instanceof RdmaProtocol.ErrorClosed e ? "the connection failed: " + e.cause().getMessage()
                    : "the connection was closed";
        }
        if (event instanceof RdmaProtocol.CommandFailed f) {
            // a flush is how a lost peer first shows on the data path, before Disconnected
            if (f.cause() instanceof RdmaProtocol.WorkRequestFailed w && w.status() == WcStatus.WR_FLUSH_ERR) {
                return "the connection was lost (its work requests were flushed)";
            }
            return f.command().getClass().getSimpleName() + " failed: " + f.cause().getMessage();
        }
        return String.valueOf(event);
    }

    private static String failure(RdmaProtocol.ConnectFailure reason) {
        if (reason instanceof RdmaProtocol.NoListener) {
            return "refused: no server listens there";
        }
        if (reason instanceof RdmaProtocol.Rejected r) {
            return "rejected by the server (status " + r.status() + ")";
        }
        if (reason instanceof RdmaProtocol.TimedOut t) {
            return "failed: no answer within " + t.after().toMillis() + " ms";
        }
        if (reason instanceof RdmaProtocol.Unreachable u) {
            return "failed: unreachable (status " + u.status() + ")";
        }
        if (reason instanceof RdmaProtocol.DeviceError d) {
            return "failed: device error: " + d.cause().getMessage();
        }
        return "failed: " + reason;
    }

    private static Throwable cause(Object event) {
        if (event instanceof RdmaProtocol.Disconnected d && d.reason() instanceof RdmaProtocol.ErrorClosed e) {
            return e.cause();
        }
        return event instanceof RdmaProtocol.CommandFailed f ? f.cause() : null;
    }

    /** Configuration whose buffers carry messages of {@code size} bytes. */
    static String bufferFor(int size) {
        return "rdma-actors.buffer-size = " + Math.max(4096, size) + "\n";
    }
}
