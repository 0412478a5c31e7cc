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
import java.util.stream.IntStream;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.util.ByteString;

/**
 * Sends beyond {@code buffer-size}, which go by rendezvous, from registered memory
 * ({@code Send.of(region.slice(...))}, read by the peer where the bytes are) against
 * {@code Send.of(ByteString)} of the same bytes (copied into memory registered for the peer to
 * read), one JVM, soft fabric. Each round trip is one large Send answered by one byte; the two
 * kinds alternate within each round, which of them goes first alternating too.
 *
 * <p>{@code java -cp "bench/target/classes:$(cat bench/target/classpath.txt)" io.rdmaactors.bench.LargeSends}
 */
public final class LargeSends {

    private static final String USAGE = "LargeSends [--sizes=1048576,16777216 bytes] [--rounds=5]"
            + " [--round-trips=20 per kind, size and round]";
    private static final Duration STEP = Duration.ofSeconds(60);

    /** One round trip to make: a Send of {@code size} bytes, from registered memory or a ByteString. */
    private record Trip(int size, boolean registered, int round) {
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
        List<Trip> plan = new ArrayList<>();
        for (int round = -1; round < rounds; round++) { // round -1 warms up
            for (int size : sizes) {
                boolean registeredFirst = (round & 1) == 0;
                for (boolean registered : new boolean[] {registeredFirst, !registeredFirst}) {
                    for (int i = 0; i < roundTrips; i++) {
                        plan.add(new Trip(size, registered, round));
                    }
                }
            }
        }
        System.out.printf("LargeSends: one JVM, soft fabric; %d rounds after one to warm up, %d round trips per kind,"
                + " size and round%n", rounds, roundTrips);
        ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "large-sends", ConfigFactory.parseString(
                "pekko.loglevel = WARNING\nrdma-actors.max-message-size = " + Math.max(largest, 16 << 20))
                .withFallback(ConfigFactory.load()));
        try {
            ByteBuffer memory = ByteBuffer.allocateDirect(largest);
            for (int i = 0; i < largest; i++) {
                memory.put(i, (byte) (i * 31));
            }
            CompletableFuture<long[]> done = new CompletableFuture<>();
            ActorRef<RdmaProtocol.ConnectionEvent> server = system.systemActorOf(answerer(), "server", Props.empty());
            system.systemActorOf(BenchSupport.selfConnecting(new InetSocketAddress("127.0.0.1", 0), server,
                    ctx -> ctx.spawn(sender(memory, plan, done), "client"), STEP), "listener", Props.empty());
            long[] nanos = done.get(STEP.toSeconds() * plan.size(), TimeUnit.SECONDS);
            report(sizes, rounds, plan, nanos);
        } finally {
            system.terminate();
            system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
    }

    /** Answers each message with one byte. */
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
                        connection.get(0).tell(RdmaProtocol.Send.of(answer));
                        return Behaviors.same();
                    })
                    .onMessage(RdmaProtocol.ConnectionEvent.class, e -> Behaviors.same())
                    .build();
        });
    }

    /** Registers {@code memory}, then makes the plan's round trips one after another, timing each. */
    private static Behavior<RdmaProtocol.ConnectionEvent> sender(ByteBuffer memory, List<Trip> plan,
                                                                 CompletableFuture<long[]> done) {
        ByteString bytes = ByteString.fromByteBuffer(memory.duplicate());
        return Behaviors.setup(ctx -> {
            long[] nanos = new long[plan.size()];
            Object[] state = new Object[2]; // the connection, the registered region
            int[] next = {0};
            long[] started = {0};
            Runnable send = () -> {
                Trip trip = plan.get(next[0]);
                @SuppressWarnings("unchecked")
                ActorRef<RdmaProtocol.ConnectionCommand> connection =
                        (ActorRef<RdmaProtocol.ConnectionCommand>) state[0];
                started[0] = System.nanoTime();
                connection.tell(trip.registered() ? RdmaProtocol.Send.of(((LocalRegion) state[1]).slice(0, trip.size()))
                        : RdmaProtocol.Send.of(bytes.take(trip.size())));
            };
            return Behaviors.receive(RdmaProtocol.ConnectionEvent.class)
                    .onMessage(RdmaProtocol.Connected.class, c -> {
                        state[0] = c.connection();
                        c.connection().tell(new RdmaProtocol.RegisterMemory(memory, ctx.getSelf().narrow()));
                        return Behaviors.same();
                    })
                    .onMessage(RdmaProtocol.MemoryRegistered.class, m -> {
                        state[1] = m.region();
                        send.run();
                        return Behaviors.same();
                    })
                    .onMessage(RdmaProtocol.Received.class, r -> {
                        nanos[next[0]++] = System.nanoTime() - started[0];
                        if (next[0] == plan.size()) {
                            done.complete(nanos);
                            return Behaviors.stopped();
                        }
                        send.run();
                        return Behaviors.same();
                    })
                    .onMessage(RdmaProtocol.CommandFailed.class, f -> {
                        done.completeExceptionally(f.cause());
                        return Behaviors.stopped();
                    })
                    .onMessage(RdmaProtocol.ConnectionEvent.class, e -> Behaviors.same())
                    .build();
        });
    }

    private static void report(int[] sizes, int rounds, List<Trip> plan, long[] nanos) {
        StringBuilder summary = new StringBuilder("SUMMARY LargeSends: from registered memory / ByteString,"
                + " round trip p50:");
        for (int size : sizes) {
            double[][] medians = new double[2][rounds]; // [registered ? 0 : 1][round], milliseconds
            for (int kind = 0; kind < 2; kind++) {
                for (int round = 0; round < rounds; round++) {
                    int k = kind;
                    int r = round;
                    double[] trips = IntStream.range(0, plan.size())
                            .filter(i -> plan.get(i).size() == size && plan.get(i).round() == r
                                    && plan.get(i).registered() == (k == 0))
                            .mapToDouble(i -> nanos[i] / 1e6).toArray();
                    medians[kind][round] = BenchSupport.median(trips);
                }
            }
            double ratio = BenchSupport.pairedRatio(medians[0], medians[1]);
            System.out.printf("%s: from registered memory %.2f ms [%.2f-%.2f], ByteString %.2f ms [%.2f-%.2f], %.2fx%n",
                    label(size), BenchSupport.median(medians[0]), BenchSupport.least(medians[0]), BenchSupport.best(medians[0]),
                    BenchSupport.median(medians[1]), BenchSupport.least(medians[1]), BenchSupport.best(medians[1]),
                    ratio);
            summary.append(String.format(" %s %.2fx;", label(size), ratio));
        }
        System.out.println(summary);
    }

    private static String label(int size) {
        return size % (1 << 20) == 0 ? (size >> 20) + " MiB" : size % 1024 == 0 ? (size >> 10) + " KiB" : size + " B";
    }
}
