package io.rdmaactors.examples;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.rdmaactors.cluster.RdmaCluster;
import io.rdmaactors.cluster.RdmaClusterProtocol;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.Member;
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
 * Members of a Pekko Cluster (Artery on 127.0.0.1, the soft fabric) ping-pong over the RDMA
 * connection {@link RdmaCluster} keeps between every pair: of each pair the member with the lower
 * address pings, the other echoes, and the pinger says DONE when its round trips are over. Each
 * pair's round trips are reported, then a member leaves and the others must see its connections
 * end. All members in this process by default; one per process with {@code --port} (the first
 * member) and {@code --seed} (the others), each leaving once its pairs are done.
 */
@Command(name = "cluster-ping", description = "Pekko Cluster members ping-pong over RDMA, every pair; then one leaves.")
public final class ClusterPing implements Callable<Integer> {

    private static final String NAME = "cluster-ping";
    private static final byte PING = 'P';
    private static final byte ECHO = 'E';
    private static final byte DONE = 'D';
    private static final long LIMIT_SECONDS = 120;

    @Option(names = {"-n", "--members"}, defaultValue = "3",
            description = "cluster members, in this process or in all (default ${DEFAULT-VALUE})")
    int members;

    @Option(names = {"-C", "--count"}, defaultValue = "1000", description = "round trips per pair (default ${DEFAULT-VALUE})")
    int count;

    @Option(names = {"-S", "--size"}, defaultValue = "64", description = "message bytes (default ${DEFAULT-VALUE})")
    int size;

    @Option(names = "--port", description = "one member in this process, the first, on this Artery port (0: a free one)")
    Integer port;

    @Option(names = "--seed", description = "one member in this process, joining the member at HOST:PORT")
    String seed;

    @Option(names = {"-v", "--verbose"}, description = "log what the members do")
    boolean verbose;

    @Spec
    CommandSpec spec;

    /** Each pair's report, by the pair's name. */
    private final Map<String, Report> reports = new ConcurrentHashMap<>();
    /** The member that leaves once every pair is done, in the one-process run. */
    private volatile Address leaver;

    @Override
    public Integer call() throws Exception {
        check("--members", members, 2, 16);
        check("--count", count, 1, Integer.MAX_VALUE);
        check("--size", size, 1, 1 << 20);
        if (port != null && seed != null) {
            throw new ParameterException(spec.commandLine(), "--port starts the first member, --seed joins one: not both");
        }
        LoggerFactory.getILoggerFactory();
        return port != null || seed != null ? oneMember() : allMembers();
    }

    /** Every member in this process; then the last one leaves. */
    private int allMembers() throws Exception {
        List<ActorSystem<Void>> systems = new ArrayList<>();
        Map<Address, String> names = new HashMap<>();
        List<CompletableFuture<Void>> finished = new ArrayList<>();
        CountDownLatch gone = new CountDownLatch(members - 1);
        try {
            Address first = null;
            for (int i = 0; i < members; i++) {
                CompletableFuture<Void> done = new CompletableFuture<>();
                finished.add(done);
                ActorSystem<Void> system = member(0, done, names::get, gone);
                Address self = Cluster.get(system).selfMember().address();
                names.put(self, "member " + (i + 1));
                first = first == null ? self : first;
                Cluster.get(system).manager().tell(Join.create(first));
                systems.add(system);
            }
            await(CompletableFuture.allOf(finished.toArray(CompletableFuture[]::new)), "not every pair finished");
            printReports();
            Cluster last = Cluster.get(systems.get(members - 1));
            leaver = last.selfMember().address();
            last.manager().tell(Leave.create(leaver));
            if (!gone.await(LIMIT_SECONDS, TimeUnit.SECONDS)) {
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

    /** One member in this process: it joins, does its pairs, reports them and leaves. */
    private int oneMember() throws Exception {
        Address join = seed == null ? null : seedAddress();
        CompletableFuture<Void> done = new CompletableFuture<>();
        ActorSystem<Void> system = member(port == null ? 0 : port, done, Address::toString, null);
        try {
            Cluster cluster = Cluster.get(system);
            Address self = cluster.selfMember().address();
            System.out.println(NAME + ": member " + self);
            System.out.flush();
            cluster.manager().tell(Join.create(join == null ? self : join));
            await(done, "this member's pairs did not finish");
            printReports();
            cluster.manager().tell(Leave.create(self));
            system.getWhenTerminated().toCompletableFuture().get(LIMIT_SECONDS, TimeUnit.SECONDS);
            System.out.println(self + " left the cluster");
            return 0;
        } finally {
            system.terminate();
        }
    }

    private Address seedAddress() {
        int colon = seed.lastIndexOf(':');
        try {
            return new Address("pekko", NAME, seed.substring(0, colon), Integer.parseInt(seed.substring(colon + 1)));
        } catch (RuntimeException e) {
            throw new ParameterException(spec.commandLine(), "--seed takes HOST:PORT, not " + seed);
        }
    }

    private ActorSystem<Void> member(int artery, CompletableFuture<Void> done, Function<Address, String> name,
            CountDownLatch gone) {
        return ActorSystem.create(Behaviors.setup(ctx -> {
            ctx.spawn(pinger(done, name, gone), "pinger");
            return Behaviors.empty();
        }), NAME, config(artery));
    }

    private static void await(CompletableFuture<Void> done, String otherwise) throws Exception {
        try {
            done.get(LIMIT_SECONDS, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            throw new Program.Failure(otherwise + " within " + LIMIT_SECONDS + " s", null);
        }
    }

    private void printReports() {
        System.out.printf("%s: %d members, every pair %d round trips of %d bytes over RDMA%n", NAME, members, count,
                size);
        reports.entrySet().stream().sorted(Map.Entry.comparingByKey())
                .forEach(e -> System.out.println(e.getValue().latency(e.getKey() + " round trip")));
    }

    private Config config(int artery) {
        return ConfigFactory.parseString("""
                pekko.actor.provider = cluster
                pekko.remote.artery.canonical.hostname = 127.0.0.1
                pekko.remote.artery.canonical.port = %d
                pekko.cluster.jmx.enabled = off
                pekko.loglevel = %s
                """.formatted(artery, verbose ? "INFO" : "WARNING")).withFallback(ConfigFactory.load());
    }

    private void check(String option, int value, int min, int max) {
        if (value < min || value > max) {
            throw new ParameterException(spec.commandLine(), option + " must be from " + min + " to " + max + ", not "
                    + value);
        }
    }

    // ------------------------------------------------------------------ the user code: one member's pinger

    /**
     * Pings every member with a higher address once connected to it, echoes the others' pings,
     * and completes {@code done} once its own round trips are over and every member that pings it
     * said DONE. {@code gone} counts the leaver's end, in the one-process run.
     */
    private Behavior<RdmaClusterProtocol.PeerEvent> pinger(CompletableFuture<Void> done, Function<Address, String> name,
            CountDownLatch gone) {
        return Behaviors.setup(ctx -> {
            RdmaCluster rdma = RdmaCluster.get(ctx.getSystem());
            rdma.subscribe(ctx.getSelf());
            Address self = Cluster.get(ctx.getSystem()).selfMember().address();
            ByteString ping = ByteString.fromArray(message(PING));
            Set<Address> peers = new HashSet<>();
            Set<Address> finished = new HashSet<>();
            Map<Address, Report> pairs = new HashMap<>();
            Map<Address, Integer> roundTrips = new HashMap<>();
            Map<Address, Long> sentAt = new HashMap<>();
            Runnable check = () -> {
                if (peers.size() == members - 1 && finished.containsAll(peers)) {
                    done.complete(null);
                }
            };
            return Behaviors.receive(RdmaClusterProtocol.PeerEvent.class)
                    .onMessage(RdmaClusterProtocol.PeerConnected.class, c -> {
                        if (peers.add(c.member()) && pings(self, c.member())) {
                            pairs.put(c.member(), new Report());
                            roundTrips.put(c.member(), 0);
                            sentAt.put(c.member(), System.nanoTime());
                            rdma.sendTo(c.member(), ping);
                        }
                        check.run();
                        return Behaviors.same();
                    })
                    .onMessage(RdmaClusterProtocol.PeerReceived.class, r -> {
                        byte kind = r.data().apply(0);
                        if (kind == PING) {
                            rdma.sendTo(r.member(), ByteString.fromArray(message(ECHO)));
                        } else if (kind == DONE) {
                            finished.add(r.member());
                            check.run();
                        } else if (kind == ECHO && pairs.containsKey(r.member())) {
                            pairs.get(r.member()).record(System.nanoTime() - sentAt.get(r.member()));
                            if (roundTrips.merge(r.member(), 1, Integer::sum) < count) {
                                sentAt.put(r.member(), System.nanoTime());
                                rdma.sendTo(r.member(), ping);
                            } else {
                                reports.put(name.apply(self) + " - " + name.apply(r.member()), pairs.get(r.member()));
                                rdma.sendTo(r.member(), ByteString.fromArray(new byte[] {DONE}));
                                finished.add(r.member());
                                check.run();
                            }
                        }
                        return Behaviors.same();
                    })
                    .onMessage(RdmaClusterProtocol.PeerDisconnected.class, d -> {
                        if (gone != null && d.member().equals(leaver)) {
                            gone.countDown();
                        }
                        return Behaviors.same();
                    })
                    .onMessage(RdmaClusterProtocol.SendFailed.class, f -> {
                        throw new IllegalStateException("a send to " + f.member() + " failed: " + f.reason());
                    })
                    .build();
        });
    }

    /** Of each pair, the member with the lower address pings. */
    private static boolean pings(Address self, Address other) {
        return Member.addressOrdering().compare(self, other) < 0;
    }

    private byte[] message(byte kind) {
        byte[] bytes = new byte[size];
        bytes[0] = kind;
        return bytes;
    }
}
