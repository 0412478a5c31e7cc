package io.rdmaactors.examples;

import io.rdmaactors.actors.Rdma;
import io.rdmaactors.actors.RdmaProtocol;
import io.rdmaactors.actors.RdmaProtocol.MulticastCommand;
import io.rdmaactors.actors.RdmaProtocol.MulticastEvent;
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
 * Multicast over UD, as mckey does: three receivers join the group, then a sender joins and sends
 * datagrams to it; each receiver checks that it got every datagram, in order, and leaves.
 */
@Command(name = "multicast",
        description = "One sender and three receivers on a multicast group, every datagram verified.")
public final class Multicast implements Callable<Integer> {

    private static final int RECEIVERS = 3;
    /** A UD datagram fits one packet of the path MTU, at most 4096 bytes. */
    private static final int MTU = 4096;

    @Mixin
    RdmaFlags flags;

    @Option(names = "--group", defaultValue = "239.1.2.3", description = "multicast group address")
    String group;

    @Option(names = {"-C", "--count"}, defaultValue = "100", description = "datagrams")
    int count;

    @Option(names = {"-S", "--size"}, defaultValue = "256", description = "datagram bytes (at least 4, within the path MTU)")
    int size;

    private interface Msg {
    }

    private record Ready() implements Msg {
    }

    private record Finished() implements Msg {
    }

    @Override
    public Integer call() {
        flags.oneProcess();
        flags.check("--count", count, 1, Integer.MAX_VALUE);
        flags.check("--size", size, Payload.MIN_SIZE, MTU);
        // UD drops a datagram that finds no receive posted: give each receiver room for a burst
        return Program.run("multicast", flags, Program.bufferFor(size) + "rdma-actors.receive-queue-depth = 128\n",
                Duration.ofSeconds(30), this::guardian);
    }

    /** Starts the sender once every receiver has joined; ends when all four have left. */
    private Behavior<Msg> guardian(Program.Result result) {
        InetSocketAddress groupAddress = new InetSocketAddress(group, 0);
        return Behaviors.setup(ctx -> {
            for (int r = 0; r < RECEIVERS; r++) {
                ctx.spawn(receiver(groupAddress, ctx.getSelf(), result), "receiver-" + r);
            }
            int[] ready = {0};
            int[] finished = {0};
            return Behaviors.receive(Msg.class)
                    .onMessage(Ready.class, r -> {
                        if (++ready[0] == RECEIVERS) {
                            ctx.spawn(sender(groupAddress, ctx.getSelf(), result), "sender");
                        }
                        return Behaviors.same();
                    })
                    .onMessage(Finished.class, f -> {
                        if (++finished[0] == RECEIVERS + 1) {
                            result.succeed(String.format("multicast: %d datagrams of %d bytes from 1 sender to %d"
                                    + " receivers on %s, each received all of them in order", count, size, RECEIVERS,
                                    group));
                        }
                        return Behaviors.same();
                    })
                    .build();
        });
    }

    private Behavior<MulticastEvent> receiver(InetSocketAddress groupAddress, ActorRef<Msg> guardian,
                                              Program.Result result) {
        return Behaviors.setup(ctx -> {
            Rdma.get(ctx.getSystem()).manager().tell(new RdmaProtocol.JoinMulticast(groupAddress, ctx.getSelf()));
            int[] next = {0};
            return Behaviors.receive(MulticastEvent.class)
                    .onMessage(RdmaProtocol.Joined.class, j -> {
                        guardian.tell(new Ready());
                        return Behaviors.receive(MulticastEvent.class)
                                .onMessage(RdmaProtocol.MulticastReceived.class, m -> {
                                    if (Payload.check(m.data(), size) != next[0]) {
                                        return result.failed(ctx.getSelf().path().name() + ": datagram " + next[0]
                                                + " lost or corrupt");
                                    }
                                    if (++next[0] == count) {
                                        j.endpoint().tell(new RdmaProtocol.Leave());
                                    }
                                    return Behaviors.same();
                                })
                                .onMessage(RdmaProtocol.Left.class, l -> left(guardian))
                                .onAnyMessage(e -> result.unexpected("receiver", e))
                                .build();
                    })
                    .onAnyMessage(e -> result.unexpected("receiver", e))
                    .build();
        });
    }

    /** Sends the next datagram when the last one's send completed, so no receiver is flooded. */
    private Behavior<MulticastEvent> sender(InetSocketAddress groupAddress, ActorRef<Msg> guardian,
                                            Program.Result result) {
        return Behaviors.setup(ctx -> {
            Rdma.get(ctx.getSystem()).manager().tell(new RdmaProtocol.JoinMulticast(groupAddress, ctx.getSelf()));
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

    private static Behavior<MulticastEvent> left(ActorRef<Msg> guardian) {
        guardian.tell(new Finished());
        return Behaviors.stopped();
    }
}
