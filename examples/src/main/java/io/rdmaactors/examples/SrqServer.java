package io.rdmaactors.examples;

import io.rdmaactors.actors.Rdma;
import io.rdmaactors.actors.RdmaProtocol;
import io.rdmaactors.actors.RdmaProtocol.ConnectionCommand;
import io.rdmaactors.actors.RdmaProtocol.ConnectionEvent;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.Callable;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The multi-QP server: one listener whose connections all receive from one shared receive queue,
 * smaller than what the clients send at once. Each client tags its messages with its number; each
 * agent checks that every message it gets is its own client's, in order, and confirms the count.
 * -s serves one client process, whose -c run opens --clients connections; neither runs both here.
 */
@Command(name = "srq-server",
        description = "A listener with a shared receive queue serving many clients; each message reaches its own connection.")
public final class SrqServer implements Callable<Integer> {

    /**
     * The connections' receive queue depth: a shared receive queue holds four times as many
     * receives (32), fewer than the clients' sends in flight, so receivers-not-ready happen.
     */
    private static final int RECEIVE_QUEUE_DEPTH = 8;
    /** Sends each client keeps in flight. */
    private static final int WINDOW = 4;
    /** The most clients a run may have; the server's backlog takes them all at once. */
    private static final int MAX_CLIENTS = 1000;
    private static final String NAME = "srq-server";

    @Mixin
    RdmaFlags flags;

    @Option(names = "--clients", defaultValue = "16", description = "clients, each on its own connection")
    int clients;

    @Option(names = {"-C", "--messages"}, defaultValue = "100", description = "messages per client")
    int messages;

    private interface Msg {
    }

    private record ClientDone() implements Msg {
    }

    /** An agent's connection ended with every message of its client checked; there were {@code clients}. */
    private record AgentDone(int clients) implements Msg {
    }

    @Override
    public Integer call() {
        flags.check("--clients", clients, 1, MAX_CLIENTS);
        flags.check("--messages", messages, 1, Integer.MAX_VALUE);
        return Program.run(NAME, flags, "rdma-actors.receive-queue-depth = " + RECEIVE_QUEUE_DEPTH + "\n",
                Duration.ofSeconds(60), this::guardian);
    }

    /** Starts the clients (against -a:-p, or its own listener when it plays both sides) and serves them. */
    private Behavior<Msg> guardian(Program.Result result) {
        return Behaviors.setup(ctx -> {
            if (flags.role() == RdmaFlags.Role.CLIENT) {
                startClients(ctx, flags.serverAddress(), ctx.getSelf(), result);
            } else {
                ctx.spawn(Program.listener(NAME, flags, result, MAX_CLIENTS, true,
                        (c, server) -> startClients(c, server, ctx.getSelf(), result),
                        (c, request) -> request.connection().tell(new RdmaProtocol.Accept(
                                c.spawnAnonymous(agent(ctx.getSelf(), result)), null))), "listener");
            }
            int[] clientsDone = {0};
            int[] agentsDone = {0};
            return Behaviors.receive(Msg.class)
                    .onMessage(ClientDone.class, d -> {
                        if (++clientsDone[0] == clients) {
                            result.report(RdmaFlags.Role.CLIENT, String.format("%s: %d clients x %d messages, each"
                                    + " count confirmed by its own connection's agent", NAME, clients, messages));
                        }
                        return Behaviors.same();
                    })
                    .onMessage(AgentDone.class, d -> {
                        if (++agentsDone[0] == d.clients()) {
                            result.report(RdmaFlags.Role.SERVER, String.format("%s server: %d connections through one"
                                    + " shared receive queue of %d receives; every message reached its own connection,"
                                    + " in order", NAME, d.clients(), 4 * RECEIVE_QUEUE_DEPTH));
                        }
                        return Behaviors.same();
                    })
                    .onAnyMessage(m -> result.unexpected("guardian", m))
                    .build();
        });
    }

    private void startClients(ActorContext<?> ctx, InetSocketAddress server, ActorRef<Msg> guardian,
                              Program.Result result) {
        for (int c = 0; c < clients; c++) {
            ctx.spawn(client(server, c, guardian, result), "client-" + c);
        }
    }

    /**
     * The request's private data names the client, its message count and how many clients there
     * are; every message must carry that name, in order.
     */
    private static Behavior<ConnectionEvent> agent(ActorRef<Msg> guardian, Program.Result result) {
        return Behaviors.receive(ConnectionEvent.class)
                .onMessage(RdmaProtocol.Connected.class, c -> {
                    int client = Payload.first(c.privateData());
                    int messages = Payload.second(c.privateData());
                    int[] next = {0};
                    return Behaviors.receive(ConnectionEvent.class)
                            .onMessage(RdmaProtocol.Received.class, r -> {
                                ByteBuffer m = r.data().asByteBuffer();
                                int from = r.data().size() == 8 ? m.getInt() : -1;
                                int seq = r.data().size() == 8 ? m.getInt() : -1;
                                if (from != client || seq != next[0]) {
                                    return result.failed("the connection of client " + client + " expected message "
                                            + next[0] + ", got message " + seq + " of client " + from);
                                }
                                if (++next[0] == messages) {
                                    c.connection().tell(RdmaProtocol.Send.of(Payload.ints(client, messages), null));
                                }
                                return Behaviors.same();
                            })
                            .onMessage(RdmaProtocol.Disconnected.class, d -> {
                                if (next[0] != messages) {
                                    return result.failed("server: client " + client + ": " + Program.describe(d)
                                            + " after " + next[0] + " of " + messages + " messages");
                                }
                                guardian.tell(new AgentDone(Payload.third(c.privateData())));
                                return Behaviors.stopped();
                            })
                            .onAnyMessage(e -> result.unexpected("agent", e))
                            .build();
                })
                .onAnyMessage(e -> result.unexpected("agent", e))
                .build();
    }

    /** Sends its numbered messages, a window at a time, and waits for the agent's count. */
    private Behavior<ConnectionEvent> client(InetSocketAddress server, int id, ActorRef<Msg> guardian,
                                             Program.Result result) {
        return Behaviors.setup(ctx -> {
            Rdma.get(ctx.getSystem()).manager().tell(RdmaProtocol.Connect.to(server, ctx.getSelf())
                    .withPrivateData(Payload.ints(id, messages, clients)).withTimeout(Program.CONNECT_TIMEOUT));
            return Behaviors.receive(ConnectionEvent.class)
                    .onMessage(RdmaProtocol.Connected.class, c -> {
                        ActorRef<ConnectionCommand> connection = c.connection();
                        int[] sent = {0};
                        Runnable sendNext = () -> {
                            int seq = sent[0]++;
                            connection.tell(RdmaProtocol.Send.of(Payload.ints(id, seq), seq));
                        };
                        while (sent[0] < Math.min(WINDOW, messages)) {
                            sendNext.run();
                        }
                        return Behaviors.receive(ConnectionEvent.class)
                                .onMessage(RdmaProtocol.Acked.class, a -> {
                                    if (sent[0] < messages) {
                                        sendNext.run();
                                    }
                                    return Behaviors.same();
                                })
                                .onMessage(RdmaProtocol.Received.class, r -> {
                                    if (Payload.first(r.data()) != id || Payload.second(r.data()) != messages) {
                                        return result.failed("client " + id + ": the agent confirmed the wrong count");
                                    }
                                    connection.tell(new RdmaProtocol.Close());
                                    return Behaviors.same();
                                })
                                .onMessage(RdmaProtocol.Disconnected.class, d -> {
                                    guardian.tell(new ClientDone());
                                    return Behaviors.stopped();
                                })
                                .onAnyMessage(e -> result.unexpected("client " + id, e))
                                .build();
                    })
                    .onAnyMessage(e -> result.unexpected("client " + id, e))
                    .build();
        });
    }
}
