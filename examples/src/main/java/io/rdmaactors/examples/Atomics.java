package io.rdmaactors.examples;

import io.rdmaactors.actors.Rdma;
import io.rdmaactors.actors.RdmaProtocol;
import io.rdmaactors.actors.RdmaProtocol.ConnectionCommand;
import io.rdmaactors.actors.RdmaProtocol.ConnectionEvent;
import io.rdmaactors.actors.RemoteRegion;
import io.rdmaactors.verbs.Access;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
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
 * Remote atomics on one counter: the server exports the same 8 bytes on every connection, and
 * several clients increment it concurrently, first with fetch-and-add, then with compare-and-swap
 * loops (a failed swap returns the current value, which is the next guess). Every increment takes
 * the counter from a value no other increment saw, so the originals of all successful operations
 * must be exactly 0..n-1 and the counter must end at n. -s serves one client process, whose
 * -c run opens --clients connections; neither runs both here.
 */
@Command(name = "atomics",
        description = "Fetch-and-add and compare-and-swap from several clients on one exported counter.")
public final class Atomics implements Callable<Integer> {

    @Mixin
    RdmaFlags flags;

    @Option(names = "--clients", defaultValue = "4", description = "concurrent clients")
    int clients;

    @Option(names = {"-C", "--count"}, defaultValue = "200", description = "increments per client and operation")
    int count;

    private static final String NAME = "atomics";
    /** The most clients a run may have; the server's backlog takes them all at once. */
    private static final int MAX_CLIENTS = 1000;
    /** Fetch-and-adds a client keeps outstanding. */
    private static final int WINDOW = 8;

    private interface Msg {
    }

    /** A client's successful originals and how many swaps it had to retry. */
    private record ClientDone(List<Long> originals, int retries) implements Msg {
    }

    /** A server agent's connection ended; its client's private data said how many clients increment how often. */
    private record AgentDone(int clients, int count) implements Msg {
    }

    @Override
    public Integer call() {
        flags.check("--clients", clients, 1, MAX_CLIENTS);
        flags.check("--count", count, 1, Integer.MAX_VALUE);
        return Program.run(NAME, flags, "", Duration.ofSeconds(60), this::guardian);
    }

    /**
     * Starts the clients (against -a:-p, or against its own listener when it plays both sides) and
     * serves them: the clients check that every value was taken once, the server that the counter
     * ends where all their increments lead.
     */
    private Behavior<Msg> guardian(Program.Result result) {
        return Behaviors.setup(ctx -> {
            // atomics work on host-order words: read the counter the way the device writes it
            ByteBuffer counter = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder());
            if (flags.role() == RdmaFlags.Role.CLIENT) {
                startClients(ctx, flags.serverAddress(), ctx.getSelf(), result);
            } else {
                ctx.spawn(Program.listener(NAME, flags, result, MAX_CLIENTS, false,
                        (c, server) -> startClients(c, server, ctx.getSelf(), result),
                        (c, request) -> request.connection().tell(new RdmaProtocol.Accept(
                                c.spawnAnonymous(exporter(counter, ctx.getSelf(), result)), null))), "listener");
            }
            List<Long> originals = new ArrayList<>();
            int[] clientsDone = {0};
            int[] agentsDone = {0};
            int[] retries = {0};
            return Behaviors.receive(Msg.class)
                    .onMessage(ClientDone.class, d -> {
                        originals.addAll(d.originals());
                        retries[0] += d.retries();
                        if (++clientsDone[0] < clients) {
                            return Behaviors.same();
                        }
                        originals.sort(null);
                        for (int i = 0; i < originals.size(); i++) {
                            if (originals.get(i) != i) {
                                return result.failed("client: value " + i + " was not taken exactly once");
                            }
                        }
                        result.report(RdmaFlags.Role.CLIENT, String.format("%s: %d clients x (%d fetch-and-add + %d"
                                + " compare-and-swap) on one exported counter: every value from 0 to %d taken once,"
                                + " %d swaps retried", NAME, clients, count, count, originals.size() - 1, retries[0]));
                        return Behaviors.same();
                    })
                    .onMessage(AgentDone.class, d -> {
                        if (++agentsDone[0] < d.clients()) {
                            return Behaviors.same();
                        }
                        long n = 2L * d.clients() * d.count();
                        if (counter.getLong(0) != n) {
                            return result.failed("server: the counter reads " + counter.getLong(0) + ", expected " + n);
                        }
                        result.report(RdmaFlags.Role.SERVER, String.format("%s server: %d clients incremented its"
                                + " counter to %d, as expected", NAME, d.clients(), n));
                        return Behaviors.same();
                    })
                    .onAnyMessage(m -> result.unexpected("guardian", m))
                    .build();
        });
    }

    private void startClients(ActorContext<?> ctx, InetSocketAddress server, ActorRef<Msg> guardian,
                              Program.Result result) {
        for (int c = 0; c < clients; c++) {
            ctx.spawn(Behaviors.<ConnectionEvent>setup(x -> new Incrementer(x, server, guardian, result)),
                    "client-" + c);
        }
    }

    /** The server's agent: exports the shared counter for remote atomics, sends the region, and says when it ends. */
    private static Behavior<ConnectionEvent> exporter(ByteBuffer counter, ActorRef<Msg> guardian,
                                                      Program.Result result) {
        return Behaviors.setup(ctx -> Behaviors.receive(ConnectionEvent.class)
                .onMessage(RdmaProtocol.Connected.class, c -> {
                    Regions.exportAndSend(ctx, c.connection(), counter, EnumSet.of(Access.REMOTE_ATOMIC));
                    return Behaviors.receive(ConnectionEvent.class)
                            .onMessage(RdmaProtocol.Disconnected.class, d -> {
                                guardian.tell(new AgentDone(Payload.first(c.privateData()),
                                        Payload.second(c.privateData())));
                                return Behaviors.stopped();
                            })
                            .onAnyMessage(e -> result.unexpected("server", e))
                            .build();
                })
                .onAnyMessage(e -> result.unexpected("server", e))
                .build());
    }

    /** A client: count fetch-and-adds (a window of them outstanding), then count successful swaps. */
    private final class Incrementer extends AbstractBehavior<ConnectionEvent> {
        private final ActorRef<Msg> guardian;
        private final Program.Result result;
        private final List<Long> originals = new ArrayList<>();
        private ActorRef<ConnectionCommand> connection;
        private RemoteRegion counter;
        private int issued;
        private long expected;
        private int retries;

        Incrementer(ActorContext<ConnectionEvent> ctx, InetSocketAddress server, ActorRef<Msg> guardian,
                    Program.Result result) {
            super(ctx);
            this.guardian = guardian;
            this.result = result;
            Rdma.get(ctx.getSystem()).manager().tell(RdmaProtocol.Connect.to(server, ctx.getSelf())
                    .withPrivateData(Payload.ints(clients, count)).withTimeout(Program.CONNECT_TIMEOUT));
        }

        @Override
        public Receive<ConnectionEvent> createReceive() {
            return newReceiveBuilder()
                    .onMessage(RdmaProtocol.Connected.class, c -> {
                        connection = c.connection();
                        return this;
                    })
                    .onMessage(RdmaProtocol.Received.class, r -> {
                        counter = RemoteRegion.fromBytes(r.data());
                        while (issued < Math.min(WINDOW, count)) {
                            fetchAdd();
                        }
                        return this;
                    })
                    .onMessage(RdmaProtocol.AtomicCompleted.class, a -> a.token().equals("add"), a -> {
                        originals.add(a.original());
                        if (issued < count) {
                            fetchAdd();
                        } else if (originals.size() == count) {
                            compareSwap(a.original() + 1);
                        }
                        return this;
                    })
                    .onMessage(RdmaProtocol.AtomicCompleted.class, a -> {
                        if (a.original() == expected) {
                            originals.add(a.original());
                        } else {
                            retries++;
                        }
                        if (originals.size() < 2 * count) {
                            compareSwap(a.original() == expected ? expected + 1 : a.original());
                        } else {
                            connection.tell(new RdmaProtocol.Close());
                        }
                        return this;
                    })
                    .onMessage(RdmaProtocol.Disconnected.class, d -> {
                        guardian.tell(new ClientDone(originals, retries));
                        return Behaviors.stopped();
                    })
                    .onAnyMessage(e -> result.unexpected("client", e))
                    .build();
        }

        private void fetchAdd() {
            issued++;
            connection.tell(new RdmaProtocol.FetchAdd(counter, 0, 1, "add"));
        }

        private void compareSwap(long guess) {
            expected = guess;
            connection.tell(new RdmaProtocol.CompareSwap(counter, 0, guess, guess + 1, "swap"));
        }
    }
}
