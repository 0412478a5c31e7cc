package io.rdmaactors.examples;

import io.rdmaactors.actors.Rdma;
import io.rdmaactors.actors.RdmaProtocol;
import io.rdmaactors.actors.RdmaProtocol.ConnectionCommand;
import io.rdmaactors.actors.RdmaProtocol.ConnectionEvent;
import io.rdmaactors.actors.RdmaProtocol.ListenerEvent;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.Callable;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * Ping-pong on the actor API: the listener hands each connection to an echoing agent, the client's
 * private data tells the agent how many messages of which size to expect, and the client checks
 * every byte that comes back.
 */
@Command(name = "actor-ping-pong", mixinStandardHelpOptions = true,
        description = "Send/receive ping-pong between a client and an echo agent, every byte verified.")
public final class ActorPingPong implements Callable<Integer> {

    @Mixin
    FabricOptions fabric;

    @Option(names = "--count", defaultValue = "1000", description = "round trips")
    int count;

    @Option(names = "--size", defaultValue = "64", description = "message bytes (at least 4)")
    int size;

    @Override
    public Integer call() {
        return Program.run("actor-ping-pong", fabric, Program.bufferFor(size), Duration.ofSeconds(60),
                result -> listener(result));
    }

    /** The guardian listens; each request gets an agent of its own. */
    private Behavior<ListenerEvent> listener(Program.Result result) {
        return Behaviors.setup(ctx -> {
            Rdma.get(ctx.getSystem()).manager().tell(new RdmaProtocol.Listen(fabric.bind(), ctx.getSelf(), 8));
            return Behaviors.receive(ListenerEvent.class)
                    .onMessage(RdmaProtocol.Listening.class, l -> {
                        ctx.spawn(client(l.localAddress(), result), "client");
                        return Behaviors.same();
                    })
                    .onMessage(RdmaProtocol.ConnectionRequested.class, r -> {
                        r.connection().tell(new RdmaProtocol.Accept(ctx.spawnAnonymous(agent(result)), null));
                        return Behaviors.same();
                    })
                    .onAnyMessage(e -> result.failed("listener: " + e))
                    .build();
        });
    }

    /** Echoes every message; the request's private data says how many and how large. */
    private static Behavior<ConnectionEvent> agent(Program.Result result) {
        return Behaviors.receive(ConnectionEvent.class)
                .onMessage(RdmaProtocol.Connected.class, c -> echoing(c.connection(), Payload.first(c.privateData()),
                        Payload.second(c.privateData()), 0, result))
                .onAnyMessage(e -> result.failed("agent: " + e))
                .build();
    }

    private static Behavior<ConnectionEvent> echoing(ActorRef<ConnectionCommand> connection, int rounds, int bytes,
                                                     int echoed, Program.Result result) {
        return Behaviors.receive(ConnectionEvent.class)
                .onMessage(RdmaProtocol.Received.class, r -> {
                    if (r.data().length != bytes) {
                        return result.failed("agent: " + r.data().length + " bytes received, " + bytes + " announced");
                    }
                    connection.tell(RdmaProtocol.Send.of(r.data(), null));
                    return echoing(connection, rounds, bytes, echoed + 1, result);
                })
                .onMessage(RdmaProtocol.Disconnected.class, d -> echoed == rounds ? Behaviors.stopped()
                        : result.failed("agent: disconnected after " + echoed + " of " + rounds + " messages"))
                .onAnyMessage(e -> result.failed("agent: " + e))
                .build();
    }

    private Behavior<ConnectionEvent> client(InetSocketAddress server, Program.Result result) {
        return Behaviors.setup(ctx -> {
            Rdma.get(ctx.getSystem()).manager().tell(new RdmaProtocol.Connect(server, ctx.getSelf(),
                    Payload.ints(count, size), Program.CONNECT_TIMEOUT));
            return Behaviors.receive(ConnectionEvent.class)
                    .onMessage(RdmaProtocol.Connected.class, c -> {
                        c.connection().tell(RdmaProtocol.Send.of(Payload.of(0, size), null));
                        return pinging(c.connection(), 0, System.nanoTime(), result);
                    })
                    .onAnyMessage(e -> result.failed("client: " + e))
                    .build();
        });
    }

    private Behavior<ConnectionEvent> pinging(ActorRef<ConnectionCommand> connection, int round, long start,
                                              Program.Result result) {
        return Behaviors.receive(ConnectionEvent.class)
                .onMessage(RdmaProtocol.Received.class, r -> {
                    if (Payload.check(r.data(), size) != round) {
                        return result.failed("round " + round + " came back wrong");
                    }
                    if (round + 1 < count) {
                        connection.tell(RdmaProtocol.Send.of(Payload.of(round + 1, size), null));
                        return pinging(connection, round + 1, start, result);
                    }
                    long elapsed = System.nanoTime() - start;
                    connection.tell(new RdmaProtocol.Disconnect());
                    return Behaviors.receive(ConnectionEvent.class)
                            .onMessage(RdmaProtocol.Disconnected.class, d -> {
                                result.succeed(String.format("actor-ping-pong: %d round trips of %d bytes, every byte"
                                        + " verified: mean round trip %.1f us", count, size, elapsed / 1e3 / count));
                                return Behaviors.stopped();
                            })
                            .build();
                })
                .onAnyMessage(e -> result.failed("client: " + e))
                .build();
    }
}
