package io.rdmaactors.cluster;

import io.rdmaactors.actors.RdmaProtocol;
import io.rdmaactors.actors.streams.RdmaStreams;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.Done;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.stream.BoundedSourceQueue;
import org.apache.pekko.stream.KillSwitches;
import org.apache.pekko.stream.QueueOfferResult;
import org.apache.pekko.stream.UniqueKillSwitch;
import org.apache.pekko.stream.javadsl.BidiFlow;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.javadsl.Keep;
import org.apache.pekko.util.ByteString;

/**
 * The Streams side of a member's {@link ClusterEndpoint}, kept by it: the channels bound to a
 * source of incoming streams, and a kill switch for every stream open to a member, so that
 * membership ends a member's streams as it ends the pair's connection.
 */
final class PeerStreams {

    /** A source of {@code channel}'s incoming streams was materialized. */
    record Bind(String channel, RdmaStreams.Options options, BoundedSourceQueue<RdmaCluster.PeerStream> queue,
            CompletableFuture<Done> bound) implements RdmaClusterProtocol.EndpointMessage {
    }

    /** That source ended. */
    record Unbind(String channel, BoundedSourceQueue<RdmaCluster.PeerStream> queue)
            implements RdmaClusterProtocol.EndpointMessage {
    }

    /** A stream to {@code member} was materialized; {@code ended} completes when it ends. */
    record Opened(Address member, UniqueKillSwitch stream, CompletionStage<Done> ended)
            implements RdmaClusterProtocol.EndpointMessage {
    }

    record Ended(Address member, UniqueKillSwitch stream) implements RdmaClusterProtocol.EndpointMessage {
    }

    private record Channel(RdmaStreams.Options options, BoundedSourceQueue<RdmaCluster.PeerStream> queue) {
    }

    private final RdmaStreams streams;
    private final ActorRef<RdmaClusterProtocol.Command> endpoint;
    private final Map<String, Channel> channels = new HashMap<>();
    private final Map<Address, Set<UniqueKillSwitch>> open = new HashMap<>();

    PeerStreams(RdmaStreams streams, ActorRef<RdmaClusterProtocol.Command> endpoint) {
        this.streams = streams;
        this.endpoint = endpoint;
    }

    /** {@code flow}, ended by its member's endpoint when membership ends the member's connection. */
    static <M> Flow<ByteString, ByteString, M> following(ActorRef<RdmaClusterProtocol.Command> endpoint,
            Address member, Flow<ByteString, ByteString, M> flow) {
        BidiFlow<ByteString, ByteString, ByteString, ByteString, UniqueKillSwitch> kill =
                BidiFlow.fromGraph(KillSwitches.singleBidi());
        return kill.join(flow, Keep.<UniqueKillSwitch, M>both()).watchTermination((switchAndFlow, ended) -> {
            endpoint.tell(new Opened(member, switchAndFlow.first(), ended));
            return switchAndFlow.second();
        });
    }

    void bind(Bind b) {
        Channel earlier = channels.get(b.channel());
        if (earlier != null) {
            IllegalStateException taken = new IllegalStateException("channel '" + b.channel()
                    + "' has a source of incoming streams on this member already");
            b.queue().fail(taken);
            b.bound().completeExceptionally(taken);
            return;
        }
        channels.put(b.channel(), new Channel(b.options(), b.queue()));
        b.bound().complete(Done.getInstance());
    }

    void unbind(Unbind u) {
        Channel c = channels.get(u.channel());
        if (c != null && c.queue() == u.queue()) {
            channels.remove(u.channel());
        }
    }

    /** Hands a member's request for a stream to its channel's source; false where none takes it. */
    boolean offer(Address member, String channel, RdmaProtocol.ConnectionRequested request) {
        Channel c = channels.get(channel);
        if (c == null) {
            return false;
        }
        RdmaCluster.PeerStream stream = new RdmaCluster.PeerStream(member,
                following(endpoint, member, streams.accept(request, c.options())));
        return c.queue().offer(stream) == QueueOfferResult.enqueued();
    }

    void opened(Opened o) {
        open.computeIfAbsent(o.member(), m -> new HashSet<>()).add(o.stream());
    }

    void ended(Ended e) {
        Set<UniqueKillSwitch> of = open.get(e.member());
        if (of != null && of.remove(e.stream()) && of.isEmpty()) {
            open.remove(e.member());
        }
    }

    /** Fails every stream open to {@code member}, which closes their connections. */
    void end(Address member, String why) {
        Set<UniqueKillSwitch> of = open.remove(member);
        if (of != null) {
            RdmaStreams.ConnectionFailed failure = new RdmaStreams.ConnectionFailed(why, null);
            of.forEach(s -> s.abort(failure));
        }
    }

    /** The endpoint stops: every source of incoming streams completes, every stream open fails. */
    void stop(String why) {
        for (Channel c : channels.values()) {
            try {
                c.queue().complete();
            } catch (IllegalStateException ended) {
                // the source ended first; its Unbind found the endpoint stopped
            }
        }
        channels.clear();
        Set.copyOf(open.keySet()).forEach(member -> end(member, why));
    }
}
