package io.rdmaactors.cluster;

import com.typesafe.config.Config;
import java.time.Duration;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Extension;
import org.apache.pekko.actor.typed.ExtensionId;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.receptionist.ServiceKey;
import org.apache.pekko.util.ByteString;

/**
 * RDMA between the members of a Pekko Cluster: each member listens on its RDMA address and keeps
 * one connection to every other member Up and reachable ({@link ClusterEndpoint}). A service
 * subscribes to hear {@link RdmaClusterProtocol.PeerConnected}, what arrives and what ends, and
 * sends to a member by its address. Settings under {@code rdma-actors.cluster}.
 */
public final class RdmaCluster implements Extension {

    private static final ExtensionId<RdmaCluster> ID = new ExtensionId<>() {
        @Override
        public RdmaCluster createExtension(ActorSystem<?> system) {
            return new RdmaCluster(system);
        }
    };

    /**
     * @param hostname       the RDMA address to listen on; empty: the member's own host
     * @param port           its port; 0 takes a free one
     * @param connectTimeout how long a dial may take
     * @param redialAfter    the pause before a member whose connection ended is dialed again
     */
    record Settings(String hostname, int port, Duration connectTimeout, Duration redialAfter) {
        static Settings from(Config config) {
            Config c = config.getConfig("rdma-actors.cluster");
            return new Settings(c.getString("hostname"), c.getInt("port"), c.getDuration("connect-timeout"),
                    c.getDuration("redial-after"));
        }
    }

    /**
     * Every member's {@link Beacon} registers under this key: a service that wants the members' RDMA
     * addresses finds them here. (The endpoints ask each other's beacons directly, at their known
     * path, as the Receptionist's listing keeps an incarnation gone for a while when a member
     * restarts on the same address.)
     */
    public static final ServiceKey<ByteString> ENDPOINTS = ServiceKey.create(ByteString.class,
            "rdma-actors-cluster-endpoint");
    /** The endpoint's name under {@code /system}, so that every member knows where another's beacon is. */
    static final String ENDPOINT_NAME = "rdma-cluster";

    private final ActorRef<RdmaClusterProtocol.Command> endpoint;

    private RdmaCluster(ActorSystem<?> system) {
        this.endpoint = system.systemActorOf(ClusterEndpoint.create(Settings.from(system.settings().config())),
                ENDPOINT_NAME, Props.empty());
    }

    public static RdmaCluster get(ActorSystem<?> system) {
        return ID.apply(system);
    }

    /** The member's endpoint, which takes {@link RdmaClusterProtocol.Command}s. */
    public ActorRef<RdmaClusterProtocol.Command> endpoint() {
        return endpoint;
    }

    public void subscribe(ActorRef<RdmaClusterProtocol.PeerEvent> subscriber) {
        endpoint.tell(new RdmaClusterProtocol.Subscribe(subscriber));
    }

    public void sendTo(Address member, ByteString data) {
        endpoint.tell(new RdmaClusterProtocol.SendTo(member, data));
    }
}
