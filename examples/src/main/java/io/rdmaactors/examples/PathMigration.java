package io.rdmaactors.examples;

import io.rdmaactors.actors.Rdma;
import io.rdmaactors.actors.RdmaProtocol;
import io.rdmaactors.actors.RdmaProtocol.ConnectionCommand;
import io.rdmaactors.actors.RdmaProtocol.ConnectionEvent;
import io.rdmaactors.actors.RdmaProtocol.ListenerEvent;
import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.FaultInjector;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.Callable;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * Automatic path migration: both sides load an alternate path through port 2, the client streams
 * numbered messages, and halfway through the fault injector cuts port 1. Both QPs migrate
 * (PathMigrated) and the server still receives every message once, in order. The client cuts a
 * port of its own process's fabric, so -c needs the soft fabric; -s serves one client and exits.
 */
@Command(name = "apm",
        description = "Alternate path loaded on both sides; port 1 cut mid-stream; no message lost (soft fabric).")
public final class PathMigration implements Callable<Integer> {

    private static final String NAME = "apm";
    /** The first int of the server's message that says its alternate path is armed. */
    private static final int READY = -1;
    /** Port 2 of soft0 answers at 127.0.0.2: each side's alternate path leads to the other's port 2. */
    private static final InetSocketAddress ALTERNATE = new InetSocketAddress("127.0.0.2", 0);
    private static final int ALTERNATE_PORT = 2;
    private static final int WINDOW = 8;

    @Mixin
    RdmaFlags flags;

    @Option(names = {"-C", "--count"}, defaultValue = "200", description = "messages")
    int count;

    private interface Msg {
    }

    private record FabricIs(Fabric fabric) implements Msg {
    }

    @Override
    public Integer call() {
        // the cut comes after half the messages were acked: one message would never see it
        flags.check("--count", count, 2, Integer.MAX_VALUE);
        return Program.run(NAME, flags, "", Duration.ofSeconds(30), this::guardian);
    }

    /**
     * The server listens at once; a client first needs the fault injector, which cuts its port 1,
     * so with both roles here the listener, which starts the client, waits for it too.
     */
    private Behavior<Msg> guardian(Program.Result result) {
        return Behaviors.setup(ctx -> {
            if (flags.role() == RdmaFlags.Role.SERVER) {
                ctx.spawn(listener(null, result), "listener");
            } else {
                Rdma.get(ctx.getSystem()).manager().tell(new RdmaProtocol.GetFabric(
                        ctx.messageAdapter(Fabric.class, FabricIs::new)));
            }
            return Behaviors.receive(Msg.class)
                    .onMessage(FabricIs.class, f -> {
                        FaultInjector faults = f.fabric().faults().orElse(null);
                        if (faults == null) {
                            return result.failed("apm cuts a port with the fault injector: the " + f.fabric().provider()
                                    + " fabric has none, run it on the soft fabric");
                        }
                        Runnable cutPrimaryPort = () -> faults.cutPort(f.fabric().device("soft0"), 1);
                        if (flags.role() == RdmaFlags.Role.CLIENT) {
                            ctx.spawn(streamer(flags.serverAddress(), cutPrimaryPort, result), "client");
                        } else {
                            ctx.spawn(listener(cutPrimaryPort, result), "listener");
                        }
                        return Behaviors.same();
                    })
                    .onAnyMessage(m -> result.unexpected("guardian", m))
                    .build();
        });
    }

    private Behavior<ListenerEvent> listener(Runnable cutPrimaryPort, Program.Result result) {
        return Program.listener(NAME, flags, result, 8, false,
                (c, server) -> c.spawn(streamer(server, cutPrimaryPort, result), "client"),
                (c, request) -> request.connection().tell(new RdmaProtocol.Accept(c.spawnAnonymous(receiver(result)),
                        null)));
    }

    private Behavior<ConnectionEvent> streamer(InetSocketAddress server, Runnable cutPrimaryPort,
                                               Program.Result result) {
        return Behaviors.setup(c -> new Streamer(c, server, cutPrimaryPort, result));
    }

    /**
     * The server's agent: loads its alternate path, checks the order of the messages its client's
     * private data announced, and tells the client once all arrived and it migrated.
     */
    private static Behavior<ConnectionEvent> receiver(Program.Result result) {
        return Behaviors.receive(ConnectionEvent.class)
                .onMessage(RdmaProtocol.Connected.class, c -> {
                    ActorRef<ConnectionCommand> connection = c.connection();
                    connection.tell(new RdmaProtocol.LoadAlternatePath(ALTERNATE, ALTERNATE_PORT));
                    int count = Payload.first(c.privateData());
                    int[] next = {0};
                    boolean[] migrated = {false};
                    Runnable reportWhenDone = () -> {
                        if (next[0] == count && migrated[0]) {
                            connection.tell(RdmaProtocol.Send.of(Payload.ints(count, 0), null));
                        }
                    };
                    return Behaviors.receive(ConnectionEvent.class)
                            .onMessage(RdmaProtocol.Received.class, r -> {
                                if (Payload.check(r.data(), Payload.MIN_SIZE) != next[0]) {
                                    return result.failed("server: message " + next[0] + " lost or out of order");
                                }
                                next[0]++;
                                reportWhenDone.run();
                                return Behaviors.same();
                            })
                            .onMessage(RdmaProtocol.AlternatePathLoaded.class, l -> {
                                // only an armed responder migrates with the client: tell it to start
                                connection.tell(RdmaProtocol.Send.of(Payload.ints(READY, 0), null));
                                return Behaviors.same();
                            })
                            .onMessage(RdmaProtocol.PathMigrated.class, p -> {
                                migrated[0] = true;
                                reportWhenDone.run();
                                return Behaviors.same();
                            })
                            .onMessage(RdmaProtocol.Disconnected.class, d -> {
                                if (next[0] != count || !migrated[0]) {
                                    return result.failed("server: " + Program.describe(d) + " after " + next[0] + " of "
                                            + count + " messages" + (migrated[0] ? "" : ", before PathMigrated"));
                                }
                                result.report(RdmaFlags.Role.SERVER, String.format("%s server: alternate path loaded;"
                                        + " PathMigrated with client %s; all %d messages arrived once, in order", NAME,
                                        c.remote(), count));
                                return Behaviors.stopped();
                            })
                            .onAnyMessage(e -> result.unexpected("server", e))
                            .build();
                })
                .onAnyMessage(e -> result.unexpected("server", e))
                .build();
    }

    /** The client: loads its alternate path, streams a window at a time, cuts port 1 halfway. */
    private final class Streamer extends AbstractBehavior<ConnectionEvent> {
        /** Cuts at once, before the next send: a cut that came later could miss the stream's end. */
        private final Runnable cutPrimaryPort;
        private final Program.Result result;
        private ActorRef<ConnectionCommand> connection;
        private int sent;
        private int acked;
        private int ackedAtMigration = -1;
        private boolean serverDone;
        private boolean loaded;
        private boolean serverArmed;

        Streamer(ActorContext<ConnectionEvent> ctx, InetSocketAddress server, Runnable cutPrimaryPort,
                 Program.Result result) {
            super(ctx);
            this.cutPrimaryPort = cutPrimaryPort;
            this.result = result;
            Rdma.get(ctx.getSystem()).manager().tell(RdmaProtocol.Connect.to(server, ctx.getSelf())
                    .withPrivateData(Payload.ints(count, 0)).withTimeout(Program.CONNECT_TIMEOUT));
        }

        @Override
        public Receive<ConnectionEvent> createReceive() {
            return newReceiveBuilder()
                    .onMessage(RdmaProtocol.Connected.class, c -> {
                        connection = c.connection();
                        connection.tell(new RdmaProtocol.LoadAlternatePath(ALTERNATE, ALTERNATE_PORT));
                        return this;
                    })
                    .onMessage(RdmaProtocol.AlternatePathLoaded.class, l -> {
                        loaded = true;
                        return startWhenArmed();
                    })
                    .onMessage(RdmaProtocol.Acked.class, a -> {
                        if (++acked == count / 2) {
                            cutPrimaryPort.run();
                        }
                        if (sent < count) {
                            sendNext();
                        }
                        return finishWhenDone();
                    })
                    .onMessage(RdmaProtocol.PathMigrated.class, p -> {
                        ackedAtMigration = acked;
                        return finishWhenDone();
                    })
                    .onMessage(RdmaProtocol.Received.class, r -> {
                        if (Payload.first(r.data()) == READY) {
                            serverArmed = true;
                            return startWhenArmed();
                        }
                        serverDone = Payload.first(r.data()) == count;
                        return finishWhenDone();
                    })
                    .onMessage(RdmaProtocol.Disconnected.class, d -> {
                        result.report(RdmaFlags.Role.CLIENT, String.format("%s: alternate path loaded on both sides,"
                                + " port 1 cut after %d of %d messages; PathMigrated (after %d acks); the server"
                                + " counted all %d", NAME, count / 2, count, ackedAtMigration, count));
                        return Behaviors.stopped();
                    })
                    .onAnyMessage(e -> result.unexpected("client", e))
                    .build();
        }

        /** Streams only once both sides armed their alternate path, so the cut finds them ready. */
        private Behavior<ConnectionEvent> startWhenArmed() {
            if (loaded && serverArmed) {
                while (sent < Math.min(WINDOW, count)) {
                    sendNext();
                }
            }
            return this;
        }

        private void sendNext() {
            connection.tell(RdmaProtocol.Send.of(Payload.of(sent, Payload.MIN_SIZE), sent));
            sent++;
        }

        private Behavior<ConnectionEvent> finishWhenDone() {
            if (acked == count && ackedAtMigration >= 0 && serverDone) {
                connection.tell(new RdmaProtocol.Close());
            }
            return this;
        }
    }
}
