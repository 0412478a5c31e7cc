package io.rdmaactors.cluster;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.rdmaactors.cluster.RdmaClusterProtocol.PeerConnected;
import io.rdmaactors.cluster.RdmaClusterProtocol.PeerEvent;
import io.rdmaactors.cluster.RdmaClusterProtocol.PeerReceived;
import java.util.HashSet;
import java.util.Set;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.AddressFromURIString;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.apache.pekko.util.ByteString;

/**
 * A cluster member in a JVM of its own, for {@link ThreeProcessesTest}: it joins the seed given,
 * says hello over RDMA to every member it connects to, and relays: told "relay ADDRESS" it sends
 * "via" to that member (once connected to it), and told "via" by a member it reports "got via from
 * MEMBER" to the seed. Runs until killed.
 */
public final class ClusterMemberProcess {

    private ClusterMemberProcess() {
    }

    /**
     * A member of the tests' clusters: Artery on 127.0.0.1, at {@code port} (0: a free one); its
     * RDMA endpoint on the system property {@code rdma-actors.test.address} where one is given (on
     * rdma-core, an address of the RDMA device: loopback does not route to it), else on 127.0.0.1.
     */
    static Config config(int port) {
        return ConfigFactory.parseString("""
                pekko.actor.provider = cluster
                pekko.remote.artery.canonical.hostname = 127.0.0.1
                pekko.remote.artery.canonical.port = %d
                pekko.cluster.jmx.enabled = off
                pekko.loglevel = WARNING
                # leaving the cluster takes several gossip rounds, which in an emulated guest outlast the default 10 s
                pekko.actor.testkit.typed.system-shutdown-default = 60s
                # binding Artery's server socket outlasts the default 3 s there too when three JVMs start at once
                pekko.remote.artery.bind.bind-timeout = 60s
                # heartbeats there came 8 s apart: past the default 3 s pause members flap unreachable, and each
                # flap tears the RDMA connections down and dials them again, which loads the guest more
                pekko.cluster.failure-detector.acceptable-heartbeat-pause = 15s
                rdma-actors.cluster.hostname = "%s"
                """.formatted(port, System.getProperty("rdma-actors.test.address", ""))).withFallback(ConfigFactory.load());
    }

    public static void main(String[] args) throws Exception {
        ActorSystem<PeerEvent> system = ActorSystem.create(Behaviors.setup(ctx -> {
            RdmaCluster rdma = RdmaCluster.get(ctx.getSystem());
            rdma.subscribe(ctx.getSelf());
            String self = Cluster.get(ctx.getSystem()).selfMember().address().toString();
            Set<Address> connected = new HashSet<>();
            Set<Address> relayTo = new HashSet<>();
            return Behaviors.receive(PeerEvent.class)
                    .onMessage(PeerConnected.class, c -> {
                        connected.add(c.member());
                        rdma.sendTo(c.member(), ByteString.fromString("hello from " + self));
                        if (relayTo.remove(c.member())) {
                            rdma.sendTo(c.member(), ByteString.fromString("via"));
                        }
                        return Behaviors.same();
                    })
                    .onMessage(PeerReceived.class, r -> {
                        String text = r.data().utf8String();
                        if (text.startsWith("relay ")) {
                            Address target = AddressFromURIString.parse(text.substring(6));
                            if (connected.contains(target)) {
                                rdma.sendTo(target, ByteString.fromString("via"));
                            } else {
                                relayTo.add(target);
                            }
                        } else if (text.equals("via")) {
                            rdma.sendTo(AddressFromURIString.parse(args[0]), ByteString.fromString("got via from "
                                    + r.member()));
                        }
                        return Behaviors.same();
                    })
                    .onMessage(PeerEvent.class, e -> Behaviors.same())
                    .build();
        }), "members", config(0));
        Cluster.get(system).manager().tell(Join.create(AddressFromURIString.parse(args[0])));
        System.out.println("MEMBER " + Cluster.get(system).selfMember().address());
        System.out.flush();
        system.getWhenTerminated().toCompletableFuture().join();
    }
}
