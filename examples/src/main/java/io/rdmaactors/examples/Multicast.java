package io.rdmaactors.examples;

import io.rdmaactors.actors.Rdma;
import io.rdmaactors.actors.RdmaProtocol;
import io.rdmaactors.actors.RdmaProtocol.MulticastCommand;
import io.rdmaactors.actors.RdmaProtocol.MulticastEvent;
import java.net.InetAddress;
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
 * Multicast over UD, with mckey's flags: -m names the group, -b the local address to join
 * through, -s sends -C datagrams of -S bytes to the group, and -m without -s receives them, each
 * checked, until -C arrived or none came for --timeout seconds. With neither -m nor -s, three
 * receivers and a sender run here: the receivers join, then the sender joins and sends.
 */
@Command(name = "multicast",
        description = "Send to or receive from a multicast group, as mckey; with neither -s nor -m, one sender and"
                + " three receivers here, every datagram verified.",
        footer = "Here -s sends to the group, as mckey -s does; -a, -p and -c do not apply.")
public final class Multicast implements Callable<Integer> {

    private static final String NAME = "multicast";
    /** The receivers of a run with both roles here. */
    private static final int RECEIVERS = 3;
    /** A UD datagram fits one packet of the path MTU, at most 4096 bytes. */
    private static final int MTU = 4096;
    private static final String DEFAULT_GROUP = "239.1.2.3";

    /** What this process does: mckey's two roles, or both of them. */
    private enum Role { SENDER, RECEIVER, BOTH }

    @Mixin
    RdmaFlags flags;

    private InetAddress group;
    private InetAddress bind;

    @Option(names = {"-C", "--count"}, defaultValue = "100", description = "datagrams (default ${DEFAULT-VALUE})")
    int count;

    @Option(names = {"-S", "--size"}, defaultValue = "256",
            description = "datagram bytes, 4 to the path MTU of " + MTU + " (default ${DEFAULT-VALUE})")
    int size;

    @Option(names = {"-V", "--verify"}, negatable = true, defaultValue = "true", fallbackValue = "true",
            description = "check every datagram's bytes (default; --no-verify counts them, for peers such as"
                    + " rdma-core's mckey, whose datagrams carry no pattern)")
    boolean verify;

    @Option(names = "--timeout", defaultValue = "10",
            description = "seconds a receiver waits for the next datagram (default ${DEFAULT-VALUE})")
    int timeout;

    @Option(names = {"-m", "--group"}, description = "the multicast group; without -s, receive from it (default "
            + DEFAULT_GROUP + ")")
    void group(String address) {
        group = flags.inetAddress(address);
        if (!group.isMulticastAddress()) {
            throw flags.usage("-m: " + address + " is not a multicast address");
        }
    }

    @Option(names = {"-b", "--bind"}, description = "the local address to join through (default: the route to the group)")
    void bind(String address) {
        bind = flags.inetAddress(address);
    }

    /** -s sends, as mckey -s; -m alone receives, as mckey without -s; neither runs both. */
    private Role role() {
        if (flags.client) {
            throw flags.usage("multicast has no -c: -s sends, -m without -s receives, neither does both here");
        }
        return flags.server ? Role.SENDER : group != null ? Role.RECEIVER : Role.BOTH;
    }

    @Override
    public Integer call() throws Exception {
        Role role = role();
        flags.check("--count", count, 1, Integer.MAX_VALUE);
        flags.check("--size", size, Payload.MIN_SIZE, MTU);
        flags.check("--timeout", timeout, 1, 86_400);
        InetSocketAddress groupAddress = new InetSocketAddress(group != null ? group
                : InetAddress.getByName(DEFAULT_GROUP), 0);
        InetSocketAddress source = bind == null ? null : new InetSocketAddress(bind, 0);
        // UD drops a datagram that finds no receive posted: give each receiver room for a burst
        return Program.run(NAME, flags, Program.bufferFor(size) + "rdma-actors.receive-queue-depth = 128\n",
                Duration.ofSeconds(60L + timeout + count / 1000), r -> guardian(role, groupAddress, source, r));
    }

    private interface Msg {
    }

    private record Ready() implements Msg {
    }

    private record Finished() implements Msg {
    }

    /** Starts the sender at once, or once every receiver here has joined; ends when all have left. */
    private Behavior<Msg> guardian(Role role, InetSocketAddress groupAddress, InetSocketAddress source,
                                   Program.Result result) {
        int receivers = role == Role.SENDER ? 0 : role == Role.RECEIVER ? 1 : RECEIVERS;
        int members = receivers + (role == Role.RECEIVER ? 0 : 1);
        String where = groupAddress.getAddress().getHostAddress();
        return Behaviors.setup(ctx -> {
            for (int r = 0; r < receivers; r++) {
                ctx.spawn(receiver(groupAddress, source, ctx.getSelf(), result), "receiver-" + r);
            }
            if (role == Role.SENDER) {
                ctx.spawn(sender(groupAddress, source, ctx.getSelf(), result), "sender");
            }
            int[] ready = {0};
            int[] finished = {0};
            return Behaviors.receive(Msg.class)
                    .onMessage(Ready.class, r -> {
                        if (role == Role.RECEIVER) {
                            System.out.println(NAME + " receiver: joined " + where + ", waiting for " + count
                                    + " datagrams");
                        } else if (++ready[0] == receivers) {
                            ctx.spawn(sender(groupAddress, source, ctx.getSelf(), result), "sender");
                        }
                        return Behaviors.same();
                    })
                    .onMessage(Finished.class, f -> {
                        if (++finished[0] == members) {
                            result.succeed(role == Role.SENDER
                                    ? String.format("%s sender: %d datagrams of %d bytes sent to %s", NAME, count,
                                            size, where)
                                    : role == Role.RECEIVER
                                    ? String.format("%s receiver: %d datagrams of %d bytes from %s, %s", NAME, count,
                                            size, where, verify ? "every one intact, in order" : "counted, not verified")
                                    : String.format("%s: %d datagrams of %d bytes from 1 sender to %d receivers on"
                                            + " %s, each received all of them in order", NAME, count, size, RECEIVERS,
                                            where));
                        }
                        return Behaviors.same();
                    })
                    .build();
        });
    }

    /** A receiver's timer: no datagram came for --timeout seconds. */
    private record Silence() {
    }

    /**
     * Joins, checks each datagram, and leaves after the last; fails when none comes for --timeout
     * seconds. Its own timer shares its mailbox with the endpoint's events, so it takes any message.
     */
    private Behavior<Object> receiver(InetSocketAddress groupAddress, InetSocketAddress source,
                                      ActorRef<Msg> guardian, Program.Result result) {
        Duration idle = Duration.ofSeconds(timeout);
        return Behaviors.setup(ctx -> Behaviors.withTimers(timers -> {
            Rdma.get(ctx.getSystem()).manager().tell(new RdmaProtocol.JoinMulticast(groupAddress, source,
                    ctx.getSelf().narrow()));
            int[] next = {0};
            String name = ctx.getSelf().path().name();
            return Behaviors.receive(Object.class)
                    .onMessage(RdmaProtocol.Joined.class, j -> {
                        guardian.tell(new Ready());
                        timers.startSingleTimer(new Silence(), idle);
                        return Behaviors.receive(Object.class)
                                .onMessage(RdmaProtocol.MulticastReceived.class, m -> {
                                    if (verify && Payload.check(m.data(), size) != next[0]) {
                                        return result.failed(name + ": datagram " + next[0] + " lost or corrupt");
                                    }
                                    if (++next[0] == count) {
                                        timers.cancelAll();
                                        j.endpoint().tell(new RdmaProtocol.Leave());
                                    } else {
                                        timers.startSingleTimer(new Silence(), idle);
                                    }
                                    return Behaviors.same();
                                })
                                .onMessage(Silence.class, t -> result.failed(name + ": " + next[0] + " of " + count
                                        + " datagrams arrived, then none for " + timeout + " s"))
                                .onMessage(RdmaProtocol.Left.class, l -> left(guardian))
                                .onAnyMessage(e -> result.unexpected(name, e))
                                .build();
                    })
                    .onAnyMessage(e -> result.unexpected(name, e))
                    .build();
        }));
    }

    /** Sends the next datagram when the last one's send completed, so no receiver is flooded. */
    private Behavior<MulticastEvent> sender(InetSocketAddress groupAddress, InetSocketAddress source,
                                            ActorRef<Msg> guardian, Program.Result result) {
        return Behaviors.setup(ctx -> {
            Rdma.get(ctx.getSystem()).manager().tell(new RdmaProtocol.JoinMulticast(groupAddress, source,
                    ctx.getSelf()));
            return Behaviors.receive(MulticastEvent.class)
                    .onMessage(RdmaProtocol.Joined.class, j -> {
                        ActorRef<MulticastCommand> endpoint = j.endpoint();
                        endpoint.tell(RdmaProtocol.SendToGroup.of(Payload.of(0, size), 0));
                        return Behaviors.receive(MulticastEvent.class)
                                .onMessage(RdmaProtocol.MulticastSent.class, s -> {
                                    int sent = (Integer) s.ack() + 1;
                                    endpoint.tell(sent < count
                                            ? RdmaProtocol.SendToGroup.of(Payload.of(sent, size), sent)
                                            : new RdmaProtocol.Leave());
                                    return Behaviors.same();
                                })
                                .onMessage(RdmaProtocol.Left.class, l -> left(guardian))
                                // multicast loops back to the sender's own QP, as on IB and RoCE
                                .onMessage(RdmaProtocol.MulticastReceived.class, m -> Behaviors.same())
                                .onAnyMessage(e -> result.unexpected("sender", e))
                                .build();
                    })
                    .onAnyMessage(e -> result.unexpected("sender", e))
                    .build();
        });
    }

    private static <T> Behavior<T> left(ActorRef<Msg> guardian) {
        guardian.tell(new Finished());
        return Behaviors.stopped();
    }
}
