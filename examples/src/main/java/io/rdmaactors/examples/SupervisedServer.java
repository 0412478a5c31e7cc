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
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PreRestart;
import org.apache.pekko.actor.typed.SupervisorStrategy;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.util.ByteString;
import org.slf4j.event.Level;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * A long-running echo server under a supervising guardian. Clients come and go, a few at a time;
 * every third asks its session handler to die. The handler's death closes that connection only
 * (its client sees PeerClosed), and the server carries on serving the clients after it. Runs until
 * --clients were served or --seconds passed, whichever comes first.
 */
@Command(name = "supervised-server",
        description = "An echo server under a supervising guardian; handler death closes one connection, the server carries on.")
public final class SupervisedServer implements Callable<Integer> {

    private static final int CONCURRENT_CLIENTS = 3;
    private static final int ROUNDS = 5;
    private static final int SIZE = 64;
    /** What a client sends to make its session handler fail; no echo is ever this short. */
    private static final ByteString DIE = ByteString.fromString("die");

    @Mixin
    RdmaFlags flags;

    @Option(names = "--clients", defaultValue = "12", description = "clients to serve at most")
    int clients;

    @Option(names = "--seconds", defaultValue = "5", description = "seconds to start new clients for at most")
    int seconds;

    private interface Msg {
    }

    private record ServerListening(InetSocketAddress address) implements Msg {
    }

    /** A client ended as it meant to ({@code problem} null) or not. */
    private record ClientFinished(boolean killedItsHandler, boolean startedAfterADeath, String problem)
            implements Msg {
    }

    @Override
    public Integer call() {
        flags.oneProcess();
        flags.check("--clients", clients, 1, 100_000);
        flags.check("--seconds", seconds, 1, 86_400);
        return Program.run("supervised-server", flags, "", Duration.ofSeconds(seconds + 30L), this::guardian);
    }

    /** Supervises the server (restarted if it fails) and lets clients come and go within the bounds. */
    private Behavior<Msg> guardian(Program.Result result) {
        return Behaviors.setup(ctx -> {
            ctx.spawn(Behaviors.supervise(server(flags.bind(), ctx.getSelf(), result)).onFailure(SupervisorStrategy.restart()),
                    "server");
            long start = System.nanoTime();
            long deadline = start + Duration.ofSeconds(seconds).toNanos();
            InetSocketAddress[] server = {null};
            int[] started = {0};
            int[] finished = {0};
            int[] deaths = {0};
            int[] servedAfterADeath = {0};
            Runnable startClient = () -> {
                int id = started[0]++;
                ctx.spawn(client(server[0], id % 3 == 2, deaths[0] > 0, ctx.getSelf()), "client-" + id);
            };
            return Behaviors.receive(Msg.class)
                    .onMessage(ServerListening.class, l -> {
                        boolean first = server[0] == null;
                        server[0] = l.address();
                        while (first && started[0] < Math.min(CONCURRENT_CLIENTS, clients)) {
                            startClient.run();
                        }
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
                            result.succeed(String.format("supervised-server: served %d clients in %.1f s, %d at a"
                                    + " time; %d handlers died, each closing only its own connection; %d clients"
                                    + " served after the first death", finished[0], (System.nanoTime() - start) / 1e9,
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
    private static Behavior<ListenerEvent> server(InetSocketAddress bind, ActorRef<Msg> guardian,
                                                  Program.Result result) {
        return Behaviors.setup(ctx -> {
            Rdma.get(ctx.getSystem()).manager().tell(new RdmaProtocol.Listen(bind, ctx.getSelf(), 16));
            return Behaviors.receive(ListenerEvent.class)
                    .onMessage(RdmaProtocol.Listening.class, l -> {
                        guardian.tell(new ServerListening(l.localAddress()));
                        return listening(l.listener(), result);
                    })
                    .onAnyMessage(e -> result.unexpected("server", e))
                    .build();
        });
    }

    private static Behavior<ListenerEvent> listening(ActorRef<ListenerCommand> listener, Program.Result result) {
        return Behaviors.setup(ctx -> Behaviors.receive(ListenerEvent.class)
                .onMessage(RdmaProtocol.ConnectionRequested.class, r -> {
                    ActorRef<ConnectionEvent> session = ctx.spawnAnonymous(Behaviors.supervise(session())
                            .onFailure(SupervisorStrategy.stop().withLogLevel(Level.INFO)));
                    r.connection().tell(new RdmaProtocol.Accept(session, null));
                    return Behaviors.same();
                })
                .onSignal(PreRestart.class, s -> {
                    listener.tell(new RdmaProtocol.Unbind());
                    return Behaviors.same();
                })
                .onAnyMessage(e -> result.unexpected("server", e))
                .build());
    }

    /** Echoes each message, and fails when asked to. */
    private static Behavior<ConnectionEvent> session() {
        return Behaviors.receive(ConnectionEvent.class)
                .onMessage(RdmaProtocol.Connected.class, c -> Behaviors.receive(ConnectionEvent.class)
                        .onMessage(RdmaProtocol.Received.class, r -> {
                            if (r.data().equals(DIE)) {
                                throw new IllegalStateException("the client asked this session handler to die");
                            }
                            c.connection().tell(RdmaProtocol.Send.of(r.data(), null));
                            return Behaviors.same();
                        })
                        .onMessage(RdmaProtocol.Disconnected.class, d -> Behaviors.stopped())
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
                                .onMessage(RdmaProtocol.Disconnected.class, d -> {
                                    boolean expected = round[0] == ROUNDS && (killHandler
                                            ? d.reason() instanceof RdmaProtocol.PeerClosed
                                            : d.reason() instanceof RdmaProtocol.Closed);
                                    guardian.tell(new ClientFinished(killHandler, afterADeath,
                                            expected ? null : name + ": " + d + " after " + round[0] + " echoes"));
                                    return Behaviors.stopped();
                                })
                                .onAnyMessage(e -> finish(guardian, name + ": " + e))
                                .build();
                    })
                    .onAnyMessage(e -> finish(guardian, name + ": " + e))
                    .build();
        });
    }

    private static Behavior<ConnectionEvent> finish(ActorRef<Msg> guardian, String problem) {
        guardian.tell(new ClientFinished(false, false, problem));
        return Behaviors.stopped();
    }
}
