package io.rdmaactors.cluster;

import com.typesafe.config.Config;
import io.rdmaactors.actors.streams.RdmaStreams;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import org.apache.pekko.Done;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.ClassicActorSystemProvider;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Extension;
import org.apache.pekko.actor.typed.ExtensionId;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.receptionist.ServiceKey;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;

/**
 * RDMA between the members of a Pekko Cluster: each member listens on its RDMA address and keeps
 * one connection to every other member Up and reachable ({@link ClusterEndpoint}). A service
 * subscribes to hear {@link RdmaClusterProtocol.PeerConnected}, what arrives and what ends, and
 * sends to a member by its address. Streams go to a member's named channel ({@link #streamTo}),
 * each over a connection of its own, and a member takes them from its channel's source
 * ({@link #incomingStreams}); membership fails them as it ends the pair's connection. Settings
 * under {@code rdma-actors.cluster}.
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

    /** How many requested streams a channel's source holds until downstream pulls them. */
    private static final int STREAM_BACKLOG = 128;

    private final ActorRef<RdmaClusterProtocol.Command> endpoint;
    private final RdmaStreams streams;
    private final long selfUid;
    /**
     * Runs callbacks on the futures Pekko's Java API converts from Scala, which run even non-async
     * callbacks on the common pool: on two cores or fewer a new thread per task.
     */
    private final Executor callbacks;

    private RdmaCluster(ActorSystem<?> system) {
        this.endpoint = system.systemActorOf(ClusterEndpoint.create(Settings.from(system.settings().config())),
                ENDPOINT_NAME, Props.empty());
        this.streams = RdmaStreams.get(system);
        this.selfUid = Cluster.get(system).selfMember().uniqueAddress().longUid();
        this.callbacks = system.executionContext();
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

    /**
     * A Streams connection to {@code channel} of {@code member}, as {@link RdmaStreams#outgoingConnection}
     * gives one (an element sent is an element received), dialed when materialized. It fails with
     * {@link RdmaStreams.ConnectionFailed} when the member is not Up and reachable with its RDMA
     * address known, when it has no source on that channel, and when membership later finds the
     * member unreachable or removed.
     *
     * @param channel a name of 1 to 47 bytes of UTF-8
     */
    public Flow<ByteString, ByteString, CompletionStage<RdmaStreams.OutgoingConnection>> streamTo(Address member,
            String channel) {
        return streamTo(member, channel, RdmaStreams.Options.defaults());
    }

    /** As {@link #streamTo(Address, String)}, with {@code options} (their private data is the channel's). */
    public Flow<ByteString, ByteString, CompletionStage<RdmaStreams.OutgoingConnection>> streamTo(Address member,
            String channel, RdmaStreams.Options options) {
        RdmaStreams.Options dialing = options.withPrivateData(
                ByteString.fromArray(DialRequest.stream(selfUid, channel).toBytes()));
        return Flow.<ByteString, ByteString, CompletionStage<CompletionStage<RdmaStreams.OutgoingConnection>>>
                fromMaterializer((materializer, attributes) -> {
                    CompletableFuture<InetSocketAddress> at = new CompletableFuture<>();
                    endpoint.tell(new ClusterEndpoint.Locate(member, at));
                    return Flow.completionStageFlow(at.thenApply(address -> PeerStreams.following(endpoint, member,
                            streams.outgoingConnection(address, dialing))));
                })
                .mapMaterializedValue(m -> m.thenComposeAsync(inner -> inner, callbacks)
                        .thenCompose(connected -> connected));
    }

    /**
     * The streams other members open to {@code channel} of this member, as they come; materializing a
     * {@link PeerStream}'s flow accepts it. One source per channel at a time; its materialized value
     * completes once the channel takes streams (fails if another source has it). Cancelling it
     * frees the channel; streams accepted go on.
     */
    public Source<PeerStream, CompletionStage<Done>> incomingStreams(String channel) {
        return incomingStreams(channel, RdmaStreams.Options.defaults());
    }

    /** As {@link #incomingStreams(String)}, with the idle timeout, half-close and connection options of {@code options}. */
    public Source<PeerStream, CompletionStage<Done>> incomingStreams(String channel, RdmaStreams.Options options) {
        DialRequest.stream(selfUid, channel); // a name that a request can carry
        return Source.<PeerStream>queue(STREAM_BACKLOG).watchTermination(Pair::create).mapMaterializedValue(p -> {
            CompletableFuture<Done> bound = new CompletableFuture<>();
            endpoint.tell(new PeerStreams.Bind(channel, options, p.first(), bound));
            p.second().whenCompleteAsync((done, failure) -> endpoint.tell(new PeerStreams.Unbind(channel, p.first())),
                    callbacks);
            return bound;
        });
    }

    /** A stream {@code member} opened to one of this member's channels; materializing {@link #flow} accepts it. */
    public record PeerStream(Address member, Flow<ByteString, ByteString, NotUsed> flow) {
        /** Accepts the stream and runs {@code handler} on it. */
        public <M> M handleWith(Flow<ByteString, ByteString, M> handler, ClassicActorSystemProvider system) {
            return flow.joinMat(handler, (notUsed, m) -> m).run(system);
        }
    }
}
