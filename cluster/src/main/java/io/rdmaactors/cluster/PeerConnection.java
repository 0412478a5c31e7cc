package io.rdmaactors.cluster;

import io.rdmaactors.actors.Rdma;
import io.rdmaactors.actors.RdmaProtocol;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Set;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;

/**
 * The handler of one member's connection, a child of the {@link ClusterEndpoint}: it tells the
 * endpoint when the connection is up and how it ended, and ends it when the endpoint says the
 * member is gone. What arrives goes straight to the subscribers, whom the endpoint keeps it told
 * of, so a message takes no hop through the endpoint. It stops with the connection.
 */
final class PeerConnection extends AbstractBehavior<Object> {

    /** The member left (Close, after what is queued) or became unreachable (Abort: nothing waits for it). */
    record End(boolean abort) {
    }

    /** The connection is up; the endpoint hands it to the subscribers. */
    record Up(Address member, ActorRef<RdmaProtocol.ConnectionCommand> connection, ActorRef<Object> peer)
            implements RdmaClusterProtocol.EndpointMessage {
    }

    /** It ended, or never came up ({@code connected} false). */
    record Down(Address member, String reason, boolean connected, ActorRef<Object> peer)
            implements RdmaClusterProtocol.EndpointMessage {
    }

    /** Who hears what arrives, from now on. */
    record Subscribers(Set<ActorRef<RdmaClusterProtocol.PeerEvent>> now) {
    }

    record Failed(Address member, String reason) implements RdmaClusterProtocol.EndpointMessage {
    }

    private final ActorRef<RdmaClusterProtocol.Command> endpoint;
    private final Address member;
    private ActorRef<RdmaProtocol.ConnectionCommand> connection;
    private Set<ActorRef<RdmaClusterProtocol.PeerEvent>> subscribers = Set.of();

    /** Dials the member's RDMA address, saying in the private data which member dials. */
    static Behavior<Object> dialing(ActorRef<RdmaClusterProtocol.Command> endpoint, Address member,
            InetSocketAddress to, byte[] self, Duration timeout) {
        return Behaviors.setup(ctx -> {
            Rdma.get(ctx.getSystem()).manager().tell(RdmaProtocol.Connect.to(to, ctx.getSelf().narrow())
                    .withPrivateData(self).withTimeout(timeout));
            return new PeerConnection(ctx, endpoint, member);
        });
    }

    /** The handler of a connection the member dialed; the endpoint accepts it with this actor. */
    static Behavior<Object> accepting(ActorRef<RdmaClusterProtocol.Command> endpoint, Address member) {
        return Behaviors.setup(ctx -> new PeerConnection(ctx, endpoint, member));
    }

    private PeerConnection(ActorContext<Object> ctx, ActorRef<RdmaClusterProtocol.Command> endpoint, Address member) {
        super(ctx);
        this.endpoint = endpoint;
        this.member = member;
    }

    @Override
    public Receive<Object> createReceive() {
        return newReceiveBuilder()
                .onMessage(RdmaProtocol.Connected.class, c -> {
                    getContext().getLog().debug("connected to {} ({})", member, c.remote());
                    connection = c.connection();
                    endpoint.tell(new Up(member, connection, getContext().getSelf()));
                    return this;
                })
                .onMessage(RdmaProtocol.Received.class, r -> {
                    RdmaClusterProtocol.PeerReceived received = new RdmaClusterProtocol.PeerReceived(member, r.data(),
                            r.immediate());
                    for (ActorRef<RdmaClusterProtocol.PeerEvent> s : subscribers) {
                        s.tell(received);
                    }
                    return this;
                })
                .onMessage(Subscribers.class, s -> {
                    subscribers = s.now();
                    return this;
                })
                .onMessage(RdmaProtocol.CommandFailed.class, f -> {
                    endpoint.tell(new Failed(member, f.cause().getMessage()));
                    return this;
                })
                .onMessage(RdmaProtocol.ConnectFailed.class, f -> down("connect failed: " + f.reason(), false))
                .onMessage(RdmaProtocol.Disconnected.class, d -> down(d.reason().toString(), true))
                .onMessage(End.class, e -> {
                    if (connection == null) {
                        // still dialing: a connection whose handler stopped closes on its own
                        return down("the member is gone", false);
                    }
                    connection.tell(e.abort() ? new RdmaProtocol.Abort() : new RdmaProtocol.Close());
                    return this;
                })
                .onMessage(RdmaProtocol.ConnectionEvent.class, e -> this)
                .build();
    }

    private Behavior<Object> down(String reason, boolean connected) {
        getContext().getLog().debug("the connection to {} {}: {}", member, connected ? "ended" : "did not come up",
                reason);
        endpoint.tell(new Down(member, reason, connected, getContext().getSelf()));
        return Behaviors.stopped();
    }
}
