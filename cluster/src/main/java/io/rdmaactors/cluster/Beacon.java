package io.rdmaactors.cluster;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.AddressFromURIString;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorRefResolver;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.UniqueAddress;
import org.apache.pekko.util.ByteString;

/**
 * A member's RDMA address, said to whoever asks, as a child of its {@link ClusterEndpoint} at a
 * path every member knows ({@code /system/rdma-cluster/beacon}). The questions and answers are
 * {@link ByteString}s, which Pekko serializes itself: "? REPLY-TO" is answered "! MEMBER UID HOST
 * PORT" to REPLY-TO, the asker's beacon, which hands the answer to its endpoint. The uid tells an answer
 * of the member Up now from one of an earlier incarnation on the same address (the Receptionist's
 * listing lags behind exactly such a restart).
 */
final class Beacon {

    static final String NAME = "beacon";

    /** An answer: the member of {@code uid} at {@code address} listens on {@code rdma}. */
    record Answer(Address address, long uid, InetSocketAddress rdma) implements RdmaClusterProtocol.EndpointMessage {
    }

    private Beacon() {
    }

    static Behavior<ByteString> create(ActorRef<RdmaClusterProtocol.Command> endpoint, UniqueAddress self,
            InetSocketAddress rdma) {
        return Behaviors.setup(ctx -> {
            ActorRefResolver resolver = ActorRefResolver.get(ctx.getSystem());
            ByteString answer = ByteString.fromString("! " + self.address() + " " + self.longUid() + " "
                    + rdma.getAddress().getHostAddress() + " " + rdma.getPort(), StandardCharsets.UTF_8);
            return Behaviors.receiveMessage(message -> {
                String text = message.utf8String();
                try {
                    if (text.startsWith("? ")) {
                        resolver.<ByteString>resolveActorRef(text.substring(2)).tell(answer);
                    } else if (text.startsWith("! ")) {
                        String[] parts = text.split(" ");
                        endpoint.tell(new Answer(AddressFromURIString.parse(parts[1]), Long.parseLong(parts[2]),
                                new InetSocketAddress(parts[3], Integer.parseInt(parts[4]))));
                    }
                } catch (RuntimeException e) {
                    ctx.getLog().debug("a beacon message not understood: {}", text);
                }
                return Behaviors.same();
            });
        });
    }
}
