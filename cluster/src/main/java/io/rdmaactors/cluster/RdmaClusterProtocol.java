package io.rdmaactors.cluster;

import io.rdmaactors.actors.RdmaProtocol;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.util.ByteString;

/**
 * What a service says to {@link RdmaCluster} and hears from it: one RDMA connection per pair of
 * members, named by the member's address. Membership is the authority: a connection to a member
 * comes when both are Up and reachable, and ends when the member is unreachable or removed.
 */
public final class RdmaClusterProtocol {

    private RdmaClusterProtocol() {
    }

    /** What the cluster's endpoint takes. */
    public sealed interface Command permits Subscribe, Unsubscribe, SendTo, EndpointMessage {
    }

    /** From now on {@code subscriber} hears every {@link PeerEvent}; first a PeerConnected per connection up now. */
    public record Subscribe(ActorRef<PeerEvent> subscriber) implements Command {
    }

    public record Unsubscribe(ActorRef<PeerEvent> subscriber) implements Command {
    }

    /**
     * One Send to {@code member} over its connection. A member with no connection now gets
     * nothing: the subscriber hears {@link SendFailed}, as it does when the Send fails.
     */
    public record SendTo(Address member, ByteString data) implements Command {
    }

    /** What the endpoint's own actors tell it. */
    non-sealed interface EndpointMessage extends Command {
    }

    /** What subscribers hear. */
    public sealed interface PeerEvent permits PeerConnected, PeerDisconnected, PeerReceived, SendFailed {
        Address member();
    }

    /**
     * A connection to {@code member} is up. Commands of {@link RdmaProtocol} (Send, Write, Read,
     * atomics, Export) go to {@code connection}; their answers go to the cluster's handler of the
     * connection, and what arrives is {@link PeerReceived}.
     */
    public record PeerConnected(Address member, ActorRef<RdmaProtocol.ConnectionCommand> connection)
            implements PeerEvent {
    }

    /** The connection to {@code member} ended: the member left, became unreachable, or the connection failed. */
    public record PeerDisconnected(Address member, String reason) implements PeerEvent {
    }

    /** A Send from {@code member}. */
    public record PeerReceived(Address member, ByteString data, Integer immediate) implements PeerEvent {
    }

    /** A {@link SendTo} that did not go, or a command on the member's connection that failed. */
    public record SendFailed(Address member, String reason) implements PeerEvent {
    }
}
