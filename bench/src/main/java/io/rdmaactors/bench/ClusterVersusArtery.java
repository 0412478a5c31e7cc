package io.rdmaactors.bench;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.rdmaactors.actors.RdmaProtocol;
import io.rdmaactors.cluster.RdmaCluster;
import io.rdmaactors.cluster.RdmaClusterProtocol;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.AddressFromURIString;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.actor.typed.receptionist.ServiceKey;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.apache.pekko.util.ByteString;

/**
 * Two members of one Pekko Cluster, each its own JVM on one host: what a cluster user does today,
 * actor messages through Artery TCP between the members, against the same exchange over the RDMA
 * connection {@link RdmaCluster} keeps between them (the soft fabric's link, through shared
 * memory between two processes of one host). In the same run, rounds interleaved: 64 B ping-pong
 * (p50, p99) and a one-way stream of 64 KiB messages (MB/s), each with the same flow control on
 * both transports: at most {@link #WINDOW} unacknowledged, the receiver acknowledging every 16th.
 * Both JVMs with {@code rdma-actors.buffer-size = 65536}, so a 64 KiB Send is one copy, not a
 * read.
 *
 * <p>{@code java -cp "bench/target/classes:$(cat bench/target/classpath.txt)" io.rdmaactors.bench.ClusterVersusArtery}
 */
public final class ClusterVersusArtery {

    private static final String USAGE = "ClusterVersusArtery [--rounds=5] [--pings=5000] [--large=2000]";
    private static final ServiceKey<ByteString> ECHO = ServiceKey.create(ByteString.class, "bench-artery-echo");
    private static final ServiceKey<ByteString> CLIENT = ServiceKey.create(ByteString.class, "bench-artery-client");
    private static final byte PING = 'P';
    private static final byte STREAM = 'S';
    private static final byte ACK = 'A';
    private static final int ACK_EVERY = 16;
    private static final int WINDOW = 64;
    private static final int LARGE = 64 << 10;
    private static final String[] TRANSPORTS = {"RDMA", "Artery"};

    private ClusterVersusArtery() {
    }

    public static void main(String[] args) {
        if (args.length == 2 && args[0].equals("--serve")) {
            BenchSupport.runOrReport("ClusterVersusArtery peer", () -> serve(AddressFromURIString.parse(args[1])));
            return;
        }
        BenchSupport.runOrReport("ClusterVersusArtery", () -> run(new BenchSupport.Options(args, USAGE, "rounds",
                "pings", "large")));
    }

    private static Config config() {
        return ConfigFactory.parseString("""
                pekko.actor.provider = cluster
                pekko.remote.artery.canonical.hostname = 127.0.0.1
                pekko.remote.artery.canonical.port = 0
                pekko.cluster.jmx.enabled = off
                pekko.loglevel = WARNING
                rdma-actors.buffer-size = 65536
                """).withFallback(ConfigFactory.load());
    }

    /**
     * Both members' actor: it hears the peer events of its member's RDMA connections, is listed
     * under {@code own} for Artery, and hears the listing of {@code other}, through an adapter:
     * the Receptionist fails an actor that both registers and subscribes.
     */
    private static void meet(ActorContext<Object> ctx, ServiceKey<ByteString> own, ServiceKey<ByteString> other) {
        RdmaCluster.get(ctx.getSystem()).subscribe(ctx.getSelf().narrow());
        ctx.getSystem().receptionist().tell(Receptionist.register(own, ctx.getSelf().narrow()));
        ctx.getSystem().receptionist().tell(Receptionist.subscribe(other,
                ctx.messageAdapter(Receptionist.Listing.class, l -> l)));
    }

    /** A ping-pong or a stream on one transport, run by the client actor. */
    private record PingPong(int transport, int size, long[] rtt, CompletableFuture<long[]> done) {
    }

    private record Stream(int transport, int count, CompletableFuture<Long> done) {
    }

    private static void run(BenchSupport.Options options) throws Exception {
        int rounds = options.integer("rounds", 5, 1);
        int pings = options.integer("pings", 5000, 100);
        int large = options.integer("large", 2000, 100);
        CompletableFuture<Void> ready = new CompletableFuture<>();
        ActorSystem<Object> system = ActorSystem.create(client(ready), "bench", config());
        Cluster cluster = Cluster.get(system);
        cluster.manager().tell(Join.create(cluster.selfMember().address()));
        List<String> command = new ArrayList<>(List.of(BenchSupport.javaBinary(), "-cp",
                System.getProperty("java.class.path"), "-Xmx1g"));
        command.addAll(BenchSupport.settingsForChild());
        command.addAll(List.of(ClusterVersusArtery.class.getName(), "--serve", cluster.selfMember().address().toString()));
        Process child = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try {
            ready.get(60, TimeUnit.SECONDS);
            System.out.printf("ClusterVersusArtery: two members, two JVMs on 127.0.0.1, %d rounds of %d 64 B round"
                    + " trips and %d x 64 KiB streamed, window %d%n", rounds, pings, large, WINDOW);
            HardwareRegime.Series[] latency = {new HardwareRegime.Series(), new HardwareRegime.Series()};
            double[][] rate = new double[2][rounds];
            for (int t = 0; t < 2; t++) { // warm-up: the JIT compiles both paths first
                for (int w = 0; w < 3; w++) {
                    pingPong(system, t, 64, pings);
                }
                stream(system, t, large / 2);
            }
            for (int round = 0; round < rounds; round++) {
                StringBuilder line = new StringBuilder("round " + (round + 1) + ":");
                for (int i = 0; i < 2; i++) {
                    int t = (i + round) % 2;
                    latency[t].add(pingPong(system, t, 64, pings));
                    rate[t][round] = stream(system, t, large);
                    line.append(String.format(" %s 64 B p50 %.1f us, 64 KiB %.0f MB/s;", TRANSPORTS[t],
                            latency[t].last(0.5), rate[t][round]));
                }
                System.out.println(line);
            }
            for (int t = 0; t < 2; t++) {
                System.out.printf("%-7s 64 B round trip p50 %8.1f us [%.1f-%.1f], p99 %8.1f us [%.1f-%.1f];"
                                + " 64 KiB stream %,.0f MB/s [%,.0f-%,.0f]%n", TRANSPORTS[t], latency[t].median(0.5),
                        latency[t].min(0.5), latency[t].max(0.5), latency[t].median(0.99), latency[t].min(0.99),
                        latency[t].max(0.99), BenchSupport.median(rate[t]), BenchSupport.least(rate[t]),
                        BenchSupport.best(rate[t]));
            }
            double p50 = latency[0].median(0.5) / latency[1].median(0.5);
            double p99 = latency[0].median(0.99) / latency[1].median(0.99);
            double throughput = BenchSupport.median(rate[0]) / BenchSupport.median(rate[1]);
            System.out.printf("SUMMARY ClusterVersusArtery: RDMA/Artery 64 B round trip p50 %.2fx%s; p99 %.2fx;"
                            + " 64 KiB stream %.2fx%s%n", p50, p50 <= 0.5 ? " (<= 0.5x)" : " MISSED (target <= 0.5x)",
                    p99, throughput, throughput >= 2 ? " (>= 2x)" : " MISSED (target >= 2x)");
        } finally {
            // this member first: the child's end would fail its connection under it
            system.terminate();
            system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
            child.getOutputStream().close();
            child.waitFor(30, TimeUnit.SECONDS);
            child.destroy();
        }
    }

    private static long[] pingPong(ActorSystem<Object> system, int transport, int size, int count) throws Exception {
        PingPong task = new PingPong(transport, size, new long[count], new CompletableFuture<>());
        system.tell(task);
        return task.done().get(120, TimeUnit.SECONDS);
    }

    /** MB/s from the first message until the receiver acknowledged the last. */
    private static double stream(ActorSystem<Object> system, int transport, int count) throws Exception {
        Stream task = new Stream(transport, count, new CompletableFuture<>());
        long start = System.nanoTime();
        system.tell(task);
        long end = task.done().get(120, TimeUnit.SECONDS);
        return (double) count * LARGE / ((end - start) / 1e9) / 1e6;
    }

    // ------------------------------------------------------------------ the measuring member

    /**
     * Runs the tasks it is told over RDMA (to the other member, once connected) or Artery (to the
     * other member's echo, once the Receptionist lists it); {@code ready} completes once both are.
     */
    private static Behavior<Object> client(CompletableFuture<Void> ready) {
        return Behaviors.setup(ctx -> new Object() {
            ActorRef<RdmaProtocol.ConnectionCommand> peer;
            ActorRef<ByteString> echo;
            PingPong pingPong;
            int done;
            long start;
            ByteString message;
            Stream stream;
            int sent;
            int acked;

            Behavior<Object> behavior() {
                meet(ctx, CLIENT, ECHO);
                return Behaviors.receive(Object.class)
                        .onMessage(RdmaClusterProtocol.PeerConnected.class, c -> {
                            peer = c.connection();
                            readyIfBoth();
                            return Behaviors.same();
                        })
                        .onMessage(Receptionist.Listing.class, l -> {
                            echo = l.getServiceInstances(ECHO).stream().findFirst().orElse(null);
                            readyIfBoth();
                            return Behaviors.same();
                        })
                        .onMessage(RdmaClusterProtocol.PeerReceived.class, r -> answered(r.data()))
                        .onMessage(ByteString.class, this::answered)
                        .onMessage(PingPong.class, p -> {
                            pingPong = p;
                            done = 0;
                            byte[] bytes = new byte[p.size()];
                            bytes[0] = PING;
                            message = ByteString.fromArrayUnsafe(bytes);
                            start = System.nanoTime();
                            send(p.transport(), message);
                            return Behaviors.same();
                        })
                        .onMessage(Stream.class, s -> {
                            stream = s;
                            message = ByteString.fromArrayUnsafe(new byte[LARGE - 9]);
                            sent = 0;
                            acked = 0;
                            sendWindow();
                            return Behaviors.same();
                        })
                        .onMessage(RdmaClusterProtocol.PeerEvent.class, e -> {
                            if (e instanceof RdmaClusterProtocol.PeerDisconnected
                                    || e instanceof RdmaClusterProtocol.SendFailed) {
                                // fails what runs now; at the end, this member's own stop ends the connection
                                IllegalStateException failed = new IllegalStateException("the RDMA connection: " + e);
                                if (pingPong != null) {
                                    pingPong.done().completeExceptionally(failed);
                                }
                                if (stream != null) {
                                    stream.done().completeExceptionally(failed);
                                }
                            }
                            return Behaviors.same();
                        })
                        .build();
            }

            void readyIfBoth() {
                if (peer != null && echo != null) {
                    ready.complete(null);
                }
            }

            void send(int transport, ByteString data) {
                if (transport == 0) {
                    peer.tell(RdmaProtocol.Send.of(data, null));
                } else {
                    echo.tell(data);
                }
            }

            Behavior<Object> answered(ByteString data) {
                if (data.apply(0) == ACK) {
                    acked = data.asByteBuffer().getInt(1);
                    if (acked == stream.count()) {
                        stream.done().complete(System.nanoTime());
                        stream = null;
                    } else {
                        sendWindow();
                    }
                    return Behaviors.same();
                }
                pingPong.rtt()[done++] = System.nanoTime() - start;
                if (done == pingPong.rtt().length) {
                    pingPong.done().complete(pingPong.rtt());
                } else {
                    start = System.nanoTime();
                    send(pingPong.transport(), message);
                }
                return Behaviors.same();
            }

            /** Each message says its number and the stream's length, before the body all share. */
            void sendWindow() {
                while (sent < stream.count() && sent - acked < WINDOW) {
                    sent++;
                    ByteString header = ByteString.fromByteBuffer(ByteBuffer.allocate(9).put(STREAM).putInt(sent)
                            .putInt(stream.count()).flip());
                    send(stream.transport(), header.concat(message));
                }
            }
        }.behavior());
    }

    // ------------------------------------------------------------------ the other member, in the child

    private static void serve(Address seed) throws Exception {
        ActorSystem<Object> system = ActorSystem.create(echo(), "bench", config());
        Cluster.get(system).manager().tell(Join.create(seed));
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        while (in.read() >= 0) {
            // runs until the parent closes our standard input
        }
        system.terminate();
        System.exit(0);
    }

    /** Echoes pings, and acknowledges every 16th message of a stream and its last, over the transport it came by. */
    private static Behavior<Object> echo() {
        return Behaviors.setup(ctx -> new Object() {
            ActorRef<ByteString> client;
            ActorRef<RdmaProtocol.ConnectionCommand> peer;

            Behavior<Object> behavior() {
                meet(ctx, ECHO, CLIENT);
                return Behaviors.receive(Object.class)
                        .onMessage(Receptionist.Listing.class, l -> {
                            client = l.getServiceInstances(CLIENT).stream().findFirst().orElse(null);
                            return Behaviors.same();
                        })
                        .onMessage(RdmaClusterProtocol.PeerConnected.class, c -> {
                            peer = c.connection();
                            return Behaviors.same();
                        })
                        .onMessage(RdmaClusterProtocol.PeerReceived.class, r -> {
                            ByteString answer = answer(r.data());
                            if (answer != null) {
                                peer.tell(RdmaProtocol.Send.of(answer, null));
                            }
                            return Behaviors.same();
                        })
                        .onMessage(ByteString.class, data -> {
                            ByteString answer = answer(data);
                            if (answer != null) {
                                client.tell(answer);
                            }
                            return Behaviors.same();
                        })
                        .onMessage(Object.class, e -> Behaviors.same())
                        .build();
            }
        }.behavior());
    }

    /** The echo of a ping, the acknowledgement due for a stream's message, or null. */
    private static ByteString answer(ByteString data) {
        if (data.apply(0) == PING) {
            return data;
        }
        ByteBuffer header = data.take(9).asByteBuffer();
        int number = header.getInt(1);
        if (number % ACK_EVERY != 0 && number != header.getInt(5)) {
            return null;
        }
        return ByteString.fromByteBuffer(ByteBuffer.allocate(5).put(ACK).putInt(number).flip());
    }
}
