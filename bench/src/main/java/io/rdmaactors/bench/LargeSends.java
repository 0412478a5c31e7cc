package io.rdmaactors.bench;

import com.typesafe.config.ConfigFactory;
import io.rdmaactors.actors.LocalRegion;
import io.rdmaactors.actors.RdmaProtocol;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.util.ByteString;

/**
 * Sends beyond {@code buffer-size}, which go by rendezvous, copying nothing against copying: one
 * connection sends from registered memory ({@code Send.of(region.slice(...))}, read by the peer
 * where the bytes are) and receives in place (the message stays in the memory it was read into
 * until released); another sends {@code ByteString}s of the same bytes (copied into memory
 * registered for the peer to read) and receives them as {@code ByteString}s (copied out of it). One
 * JVM, soft fabric. Each round trip is one large Send answered by one byte; the two connections
 * take turns within each round, which of them goes first alternating.
 *
 * <p>{@code java -cp "bench/target/classes:$(cat bench/target/classpath.txt)" io.rdmaactors.bench.LargeSends}
 */
public final class LargeSends {

    private static final String USAGE = "LargeSends [--sizes=1048576,16777216 bytes] [--rounds=5]"
            + " [--round-trips=20 per connection, size and round]";
    private static final Duration STEP = Duration.ofSeconds(60);
    private static final RdmaProtocol.ConnectionOptions IN_PLACE = RdmaProtocol.ConnectionOptions.none()
            .withReceiveInPlace(256);

    /** Makes {@code roundTrips} round trips of {@code size} bytes and completes {@code result} with their nanoseconds. */
    private record Go(int size, int roundTrips, CompletableFuture<long[]> result) {
    }

    private LargeSends() {
    }

    public static void main(String[] args) {
        BenchSupport.Options o = new BenchSupport.Options(args, USAGE, "sizes", "rounds", "round-trips");
        int[] sizes = Arrays.stream(o.string("sizes", "1048576,16777216").split(",")).mapToInt(Integer::parseInt)
                .toArray();
        int rounds = o.integer("rounds", 5, 1);
        int roundTrips = o.integer("round-trips", 20, 1);
        BenchSupport.runOrReport("LargeSends", () -> run(sizes, rounds, roundTrips));
    }

    private static void run(int[] sizes, int rounds, int roundTrips) throws Exception {
        int largest = Arrays.stream(sizes).max().orElseThrow();
        System.out.printf("LargeSends: one JVM, soft fabric; %d rounds after one to warm up, %d round trips per"
                + " connection, size and round%n", rounds, roundTrips);
        ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "large-sends", ConfigFactory.parseString(
                "pekko.loglevel = WARNING\nrdma-actors.max-message-size = " + Math.max(largest, 16 << 20))
                .withFallback(ConfigFactory.load()));
        try {
            ByteBuffer memory = ByteBuffer.allocateDirect(largest);
            for (int i = 0; i < largest; i++) {
                memory.put(i, (byte) (i * 31));
            }
            // [0]: registered memory, in place; [1]: ByteStrings
            List<ActorRef<Object>> senders = List.of(connect(system, memory, true), connect(system, memory, false));
            double[][][] medians = new double[sizes.length][2][rounds]; // milliseconds
            for (int round = -1; round < rounds; round++) { // round -1 warms up
                for (int s = 0; s < sizes.length; s++) {
                    for (int turn = 0; turn < 2; turn++) {
                        int kind = (round & 1) == 0 ? turn : 1 - turn;
                        CompletableFuture<long[]> result = new CompletableFuture<>();
                        senders.get(kind).tell(new Go(sizes[s], roundTrips, result));
                        long[] nanos = result.get(STEP.toSeconds(), TimeUnit.SECONDS);
                        if (round >= 0) {
                            medians[s][kind][round] = BenchSupport.median(Arrays.stream(nanos)
                                    .mapToDouble(n -> n / 1e6).toArray());
                        }
                    }
                }
            }
            report(sizes, medians);
        } finally {
            system.terminate();
            system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
    }

    /** A connection to an answerer of its own; the sender, once connected (and its memory registered). */
    private static ActorRef<Object> connect(ActorSystem<Void> system, ByteBuffer memory, boolean registered)
            throws Exception {
        String name = registered ? "registered" : "bytestrings";
        CompletableFuture<Void> ready = new CompletableFuture<>();
        ActorRef<Object> sender = system.systemActorOf(sender(memory, registered, ready), name + "-sender",
                Props.empty());
        ActorRef<RdmaProtocol.ConnectionEvent> answerer = system.systemActorOf(answerer(), name + "-answerer",
                Props.empty());
        system.systemActorOf(BenchSupport.selfConnecting(new InetSocketAddress("127.0.0.1", 0), answerer,
                ctx -> sender.narrow(), STEP, registered ? IN_PLACE : RdmaProtocol.ConnectionOptions.none()),
                name + "-listener", Props.empty());
        ready.get(STEP.toSeconds(), TimeUnit.SECONDS);
        return sender;
    }

    /** Answers each message with one byte, giving back (releasing) what it received with the answer. */
    private static Behavior<RdmaProtocol.ConnectionEvent> answerer() {
        return Behaviors.setup(ctx -> {
            List<ActorRef<RdmaProtocol.ConnectionCommand>> connection = new ArrayList<>(1);
            ByteString answer = ByteString.fromArray(new byte[1]);
            return Behaviors.receive(RdmaProtocol.ConnectionEvent.class)
                    .onMessage(RdmaProtocol.Connected.class, c -> {
                        connection.add(c.connection());
                        return Behaviors.same();
                    })
                    .onMessage(RdmaProtocol.Received.class, r -> {
                        connection.get(0).tell(RdmaProtocol.Send.of(answer).releasing(r));
                        return Behaviors.same();
                    })
                    .onMessage(RdmaProtocol.ConnectionEvent.class, e -> Behaviors.same())
                    .build();
        });
    }

    /** Sends from registered memory or as ByteStrings, timing each round trip of a Go. */
    private static Behavior<Object> sender(ByteBuffer memory, boolean registered, CompletableFuture<Void> ready) {
        ByteString bytes = ByteString.fromByteBuffer(memory.duplicate());
        return Behaviors.setup(ctx -> new Object() {
            ActorRef<RdmaProtocol.ConnectionCommand> connection;
            LocalRegion region;
            /** The Go under way, its round trips' nanoseconds so far, and when the last one started. */
            Go go;
            long[] nanos;
            int done;
            long started;

            Behavior<Object> behavior() {
                return Behaviors.receive(Object.class)
                        .onMessage(RdmaProtocol.Connected.class, c -> {
                            connection = c.connection();
                            if (registered) {
                                connection.tell(new RdmaProtocol.RegisterMemory(memory, ctx.getSelf().narrow()));
                            } else {
                                ready.complete(null);
                            }
                            return Behaviors.same();
                        })
                        .onMessage(RdmaProtocol.MemoryRegistered.class, m -> {
                            region = m.region();
                            ready.complete(null);
                            return Behaviors.same();
                        })
                        .onMessage(Go.class, g -> {
                            go = g;
                            nanos = new long[g.roundTrips()];
                            done = 0;
                            send();
                            return Behaviors.same();
                        })
                        .onMessage(RdmaProtocol.Received.class, r -> {
                            nanos[done++] = System.nanoTime() - started;
                            if (done == go.roundTrips()) {
                                go.result().complete(nanos);
                            } else {
                                send();
                            }
                            return Behaviors.same();
                        })
                        .onMessage(RdmaProtocol.CommandFailed.class, f -> {
                            ready.completeExceptionally(f.cause());
                            if (go != null) {
                                go.result().completeExceptionally(f.cause());
                            }
                            return Behaviors.same();
                        })
                        .onMessage(Object.class, e -> Behaviors.same())
                        .build();
            }

            void send() {
                started = System.nanoTime();
                connection.tell(registered ? RdmaProtocol.Send.of(region.slice(0, go.size()))
                        : RdmaProtocol.Send.of(bytes.take(go.size())));
            }
        }.behavior());
    }

    private static void report(int[] sizes, double[][][] medians) {
        StringBuilder summary = new StringBuilder("SUMMARY LargeSends: copying nothing / ByteStrings, round trip p50:");
        for (int s = 0; s < sizes.length; s++) {
            double[] none = medians[s][0];
            double[] copied = medians[s][1];
            double ratio = BenchSupport.pairedRatio(none, copied);
            System.out.printf("%s: copying nothing %.2f ms [%.2f-%.2f], ByteStrings %.2f ms [%.2f-%.2f], %.2fx%n",
                    label(sizes[s]), BenchSupport.median(none), BenchSupport.least(none), BenchSupport.best(none),
                    BenchSupport.median(copied), BenchSupport.least(copied), BenchSupport.best(copied), ratio);
            summary.append(String.format(" %s %.2fx;", label(sizes[s]), ratio));
        }
        System.out.println(summary);
    }

    private static String label(int size) {
        return size % (1 << 20) == 0 ? (size >> 20) + " MiB" : size % 1024 == 0 ? (size >> 10) + " KiB" : size + " B";
    }
}
