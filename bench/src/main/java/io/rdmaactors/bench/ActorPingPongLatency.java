package io.rdmaactors.bench;

import com.typesafe.config.ConfigFactory;
import io.rdmaactors.actors.Rdma;
import io.rdmaactors.actors.RdmaProtocol;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/**
 * Send/receive ping-pong latency through the actor API, the counterpart of {@link JnaPingPong}
 * one layer up: a listener whose handler echoes, a client handler that sends the next message
 * when the echo of the last arrives, both in one process on {@code --fabric} (soft or jna) at
 * {@code --address}. Each round trip is timed from the client handler's Send to its Received;
 * reported as ib_send_lat reports, half the round trip, with t_typical the median.
 * {@code native/latency-vs-perftest.sh} runs it beside JnaPingPong and ib_send_lat in the guest.
 */
public final class ActorPingPongLatency {

    private static final Duration STEP = Duration.ofSeconds(20);
    private static final String USAGE = "ActorPingPongLatency [--fabric=soft|jna, default soft]"
            + " [--address=IPv4, default 127.0.0.1] [--iterations=N measured round trips, default 10000]"
            + " [--warmup=N, default 20000] [--size=N bytes, default 64]"
            + " [--srq: the listener's connections receive from its shared receive queue]";

    private ActorPingPongLatency() {
    }

    public static void main(String[] args) {
        String fabric = "soft";
        String address = "127.0.0.1";
        boolean srq = false;
        List<String> rest = new ArrayList<>();
        for (String a : args) {
            if (a.startsWith("--fabric=")) {
                fabric = a.substring("--fabric=".length());
            } else if (a.startsWith("--address=")) {
                address = a.substring("--address=".length());
            } else if (a.equals("--srq")) {
                srq = true;
            } else {
                rest.add(a);
            }
        }
        BenchSupport.Options o = new BenchSupport.Options(rest.toArray(new String[0]), USAGE, "iterations", "warmup",
                "size");
        int iterations = o.integer("iterations", 10_000, 1);
        int warmup = o.integer("warmup", 20_000, 0);
        int size = o.integer("size", 64, 1);
        String f = fabric;
        String host = address;
        boolean shared = srq;
        BenchSupport.runOrReport("ActorPingPongLatency", () -> run(f, new InetSocketAddress(host, 0), shared, size,
                iterations, warmup));
    }

    private static void run(String fabric, InetSocketAddress bind, boolean srq, int size, int iterations, int warmup)
            throws Exception {
        System.out.printf("ActorPingPongLatency: %d-byte Send/Received ping-pong through the actors on the %s fabric"
                + " at %s; warm-up %d, %d measured round trips%n", size, fabric, bind.getAddress().getHostAddress(),
                warmup, iterations);
        long[] rtt = new long[iterations];
        CompletableFuture<Void> done = new CompletableFuture<>();
        ActorSystem<Void> system = ActorSystem.create(Behaviors.setup(ctx -> {
            ActorRef<RdmaProtocol.ConnectionEvent> echo = ctx.spawn(EchoSinkPeer.echo(), "echo");
            ctx.spawn(Behaviors.<RdmaProtocol.ListenerEvent>setup(l -> {
                Rdma.get(l.getSystem()).manager().tell(new RdmaProtocol.Listen(bind, l.getSelf(), 8, srq));
                return Behaviors.receive(RdmaProtocol.ListenerEvent.class)
                        .onMessage(RdmaProtocol.Listening.class, listening -> {
                            ActorRef<RdmaProtocol.ConnectionEvent> client = l.spawn(
                                    client(new byte[size], warmup, rtt, done), "client");
                            Rdma.get(l.getSystem()).manager().tell(RdmaProtocol.Connect.to(listening.localAddress(), client).withTimeout(STEP));
                            return Behaviors.same();
                        })
                        .onMessage(RdmaProtocol.ConnectionRequested.class, r -> {
                            r.connection().tell(new RdmaProtocol.Accept(echo, null));
                            return Behaviors.same();
                        })
                        .onMessage(RdmaProtocol.CommandFailed.class, failed -> {
                            done.completeExceptionally(failed.cause());
                            return Behaviors.same();
                        })
                        .onMessage(RdmaProtocol.ListenerEvent.class, e -> Behaviors.same())
                        .build();
            }), "listener");
            return Behaviors.empty();
        }), "latency", ConfigFactory.parseString("pekko.loglevel = WARNING\nrdma-actors.fabric = " + fabric)
                .withFallback(ConfigFactory.load()));
        try {
            done.get(300, TimeUnit.SECONDS);
        } finally {
            system.terminate();
            system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
        BenchSupport.printLatencyTable("ActorPingPongLatency", srq ? fabric + " (the listener's SRQ)" : fabric, size, rtt);
    }

    private static Behavior<RdmaProtocol.ConnectionEvent> client(byte[] message, int warmup, long[] rtt,
                                                                 CompletableFuture<Void> done) {
        return Behaviors.setup(ctx -> {
            ActorRef<?>[] connection = new ActorRef<?>[1];
            long[] start = new long[1];
            int[] count = new int[1];
            return Behaviors.receive(RdmaProtocol.ConnectionEvent.class)
                    .onMessage(RdmaProtocol.Connected.class, c -> {
                        connection[0] = c.connection();
                        start[0] = System.nanoTime();
                        EchoSinkPeer.connection(connection[0]).tell(RdmaProtocol.Send.of(message, null));
                        return Behaviors.same();
                    })
                    .onMessage(RdmaProtocol.Received.class, r -> {
                        long now = System.nanoTime();
                        int i = count[0]++;
                        if (i >= warmup) {
                            rtt[i - warmup] = now - start[0];
                        }
                        if (count[0] == warmup + rtt.length) {
                            EchoSinkPeer.connection(connection[0]).tell(new RdmaProtocol.Close());
                            done.complete(null);
                        } else {
                            start[0] = System.nanoTime();
                            EchoSinkPeer.connection(connection[0]).tell(RdmaProtocol.Send.of(message, null));
                        }
                        return Behaviors.same();
                    })
                    .onMessage(RdmaProtocol.ConnectFailed.class, f -> {
                        done.completeExceptionally(new IllegalStateException("connect failed: " + f.reason()));
                        return Behaviors.same();
                    })
                    .onMessage(RdmaProtocol.ConnectionEvent.class, e -> Behaviors.same())
                    .build();
        });
    }
}
