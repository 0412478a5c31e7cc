package io.rdmaactors.examples;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.rdmaactors.cluster.RdmaCluster;
import io.rdmaactors.cluster.RdmaClusterProtocol;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.apache.pekko.cluster.typed.Leave;
import org.apache.pekko.util.ByteString;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * Members of a Pekko Cluster, each an actor system of this process (Artery on 127.0.0.1, the soft
 * fabric), ping-pong over the RDMA connection {@link RdmaCluster} keeps between every pair: the
 * member with the lower number pings, the other echoes. Each pair's round trips are reported;
 * then the last member leaves the cluster, and every other member must see its connection end.
 */
@Command(name = "cluster-ping", description = "Pekko Cluster members ping-pong over RDMA, every pair; then one leaves.")
public final class ClusterPing implements Callable<Integer> {

    private static final String NAME = "cluster-ping";
    private static final byte PING = 'P';
    private static final byte ECHO = 'E';
    private static final long LIMIT_SECONDS = 120;

    @Option(names = {"-n", "--members"}, defaultValue = "3", description = "cluster members (default ${DEFAULT-VALUE})")
    int members;

    @Option(names = {"-C", "--count"}, defaultValue = "1000", description = "round trips per pair (default ${DEFAULT-VALUE})")
    int count;

    @Option(names = {"-S", "--size"}, defaultValue = "64", description = "message bytes, at least 2 (default ${DEFAULT-VALUE})")
    int size;

    @Option(names = {"-v", "--verbose"}, description = "log what the members do")
    boolean verbose;

    @Spec
    CommandSpec spec;

    /** What every member's pinger writes to: each pair's report, and who saw the leaver go. */
    private final Map<String, Report> reports = new ConcurrentHashMap<>();
    private CountDownLatch pairsDone;
    private CountDownLatch leaveSeen;
    /** The member that leaves once every pair is done: the last to join. */
    private volatile Address leaver;

    @Override
    public Integer call() throws Exception {
        check("--members", members, 2, 16);
        check("--count", count, 1, Integer.MAX_VALUE);
        check("--size", size, 2, 1 << 20);
        LoggerFactory.getILoggerFactory();
        pairsDone = new CountDownLatch(members * (members - 1) / 2);
        leaveSeen = new CountDownLatch(members - 1);
        List<ActorSystem<Void>> systems = new ArrayList<>();
        try {
            Address seed = null;
            for (int i = 0; i < members; i++) {
                int number = i + 1;
                ActorSystem<Void> system = ActorSystem.create(Behaviors.setup(ctx -> {
                    ctx.spawn(pinger(number), "pinger");
                    return Behaviors.empty();
                }), NAME, config());
                Cluster cluster = Cluster.get(system);
                seed = seed == null ? cluster.selfMember().address() : seed;
                cluster.manager().tell(Join.create(seed));
                systems.add(system);
            }
            if (!pairsDone.await(LIMIT_SECONDS, TimeUnit.SECONDS)) {
                throw new Program.Failure("not every pair finished within " + LIMIT_SECONDS + " s", null);
            }
            System.out.printf("%s: %d members, every pair %d round trips of %d bytes over RDMA%n", NAME, members,
                    count, size);
            reports.entrySet().stream().sorted(Map.Entry.comparingByKey())
                    .forEach(e -> System.out.println(e.getValue().latency(e.getKey() + " round trip")));
            Cluster last = Cluster.get(systems.get(members - 1));
            leaver = last.selfMember().address();
            last.manager().tell(Leave.create(leaver));
            if (!leaveSeen.await(LIMIT_SECONDS, TimeUnit.SECONDS)) {
                throw new Program.Failure("member " + members + " left, but not every other member saw its"
                        + " connection end", null);
            }
            System.out.printf("member %d left the cluster: each of the other %d saw its connection to it end%n",
                    members, members - 1);
            return 0;
        } finally {
            for (ActorSystem<Void> system : systems) {
                system.terminate();
            }
            for (ActorSystem<Void> system : systems) {
                system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
            }
        }
    }

    private Config config() {
        return ConfigFactory.parseString("""
                pekko.actor.provider = cluster
                pekko.remote.artery.canonical.hostname = 127.0.0.1
                pekko.remote.artery.canonical.port = 0
                pekko.cluster.jmx.enabled = off
                pekko.loglevel = %s
                """.formatted(verbose ? "INFO" : "WARNING")).withFallback(ConfigFactory.load());
    }

    private void check(String option, int value, int min, int max) {
        if (value < min || value > max) {
            throw new ParameterException(spec.commandLine(), option + " must be from " + min + " to " + max + ", not "
                    + value);
        }
    }

    // ------------------------------------------------------------------ the user code: one member's pinger

    /**
     * Pings every member with a higher number once connected to it, echoes the pings of the
     * others, and counts the leaving member's end. Numbers travel in the first byte after the kind.
     */
    private Behavior<RdmaClusterProtocol.PeerEvent> pinger(int number) {
        return Behaviors.setup(ctx -> {
            RdmaCluster rdma = RdmaCluster.get(ctx.getSystem());
            rdma.subscribe(ctx.getSelf());
            Map<Address, Long> sentAt = new ConcurrentHashMap<>();
            Map<Address, Integer> done = new ConcurrentHashMap<>();
            Map<Address, Report> pairs = new ConcurrentHashMap<>();
            byte[] ping = new byte[size];
            ping[0] = PING;
            ping[1] = (byte) number;
            return Behaviors.receive(RdmaClusterProtocol.PeerEvent.class)
                    .onMessage(RdmaClusterProtocol.PeerConnected.class, c -> {
                        // the lower number pings: the one whose echo carries a higher number is not asked
                        sentAt.put(c.member(), System.nanoTime());
                        rdma.sendTo(c.member(), ByteString.fromArray(new byte[] {PING, (byte) number}));
                        return Behaviors.same();
                    })
                    .onMessage(RdmaClusterProtocol.PeerReceived.class, r -> {
                        byte kind = r.data().apply(0);
                        int other = r.data().apply(1);
                        if (kind == PING) {
                            byte[] echo = r.data().toArray();
                            echo[0] = ECHO;
                            echo[1] = (byte) number;
                            rdma.sendTo(r.member(), ByteString.fromArrayUnsafe(echo));
                        } else if (kind == ECHO && other > number) {
                            Report report = pairs.computeIfAbsent(r.member(), m -> new Report());
                            int n = done.merge(r.member(), 1, Integer::sum);
                            if (n > 1) { // the first is the handshake that found who pings
                                report.record(System.nanoTime() - sentAt.get(r.member()));
                            }
                            if (n <= count) {
                                sentAt.put(r.member(), System.nanoTime());
                                rdma.sendTo(r.member(), ByteString.fromArray(ping));
                            } else {
                                reports.put("member " + number + " - member " + other, report);
                                pairsDone.countDown();
                            }
                        }
                        return Behaviors.same();
                    })
                    .onMessage(RdmaClusterProtocol.PeerDisconnected.class, d -> {
                        if (d.member().equals(leaver)) {
                            leaveSeen.countDown();
                        }
                        return Behaviors.same();
                    })
                    .onMessage(RdmaClusterProtocol.SendFailed.class, f -> {
                        throw new IllegalStateException("a send to " + f.member() + " failed: " + f.reason());
                    })
                    .build();
        });
    }
}
