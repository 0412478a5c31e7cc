package io.rdmaactors.actors.streams;

import io.rdmaactors.actors.Rdma;
import io.rdmaactors.actors.RdmaProtocol;
import io.rdmaactors.actors.RdmaSettings;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.Done;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.ClassicActorSystemProvider;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.stream.javadsl.BidiFlow;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.javadsl.Framing;
import org.apache.pekko.stream.javadsl.Keep;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;

/**
 * Pekko Streams over RDMA connections, shaped as Pekko's {@code Tcp.get(system)}: {@link #bind}
 * gives a source of incoming connections, {@link #outgoingConnection} a flow of bytes.
 *
 * <p>Unlike TCP, framing is kept: an element sent arrives as one element, up to
 * {@code rdma-actors.max-message-size}. On the wire each element is a 4-byte big-endian length and
 * its bytes (Pekko's simple framing protocol), carried in Sends of up to {@code buffer-size}: a
 * large element spans Sends, and under load many small ones share one. Back-pressure reaches both
 * ways: the writer has at most a send queue's worth of Sends unacknowledged, and a reader that does
 * not pull stops reposting receives, which holds the peer's sends back (receiver not ready).
 * Completing the upstream half-closes: an empty message with the immediate {@link #END_OF_STREAM}
 * tells the peer, whose downstream then completes; once both directions ended the connection
 * closes. A typed-API peer sees that message as a {@code Received} with no bytes and that immediate.
 */
public final class RdmaStreams {

    /** The immediate of the empty message that ends one direction of a Streams connection ("EOF!"). */
    public static final int END_OF_STREAM = 0x454f4621;
    /** The backlog of {@link RdmaProtocol.Listen#on}. */
    private static final int DEFAULT_BACKLOG = 128;

    private final ActorRef<RdmaProtocol.ManagerCommand> manager;
    private final RdmaSettings settings;

    private RdmaStreams(Rdma rdma) {
        this.manager = rdma.manager();
        this.settings = rdma.settings();
    }

    public static RdmaStreams get(ActorSystem<?> system) {
        return new RdmaStreams(Rdma.get(system));
    }

    public static RdmaStreams get(ClassicActorSystemProvider system) {
        return get(org.apache.pekko.actor.typed.javadsl.Adapter.toTyped(system.classicSystem()));
    }

    /**
     * What a Streams connection may be given besides its address, as Pekko's {@code Tcp} takes it:
     * the local address to connect from, a connect timeout (else {@code rdma-actors.connect-timeout}),
     * an idle timeout (the stream fails with a {@code TimeoutException} when no element passed either
     * way for that long), half-close (finishing upstream ends only this side's direction; without
     * it, the connection closes once what upstream gave has arrived), the connection's own
     * settings (queue depths, write queue, largest element), as the actor API's {@code Connect} and
     * {@code Listen} take them, and the private data an outgoing connection's request carries (at
     * most {@link RdmaProtocol.Connect#MAX_PRIVATE_DATA} bytes; the listener sees it in
     * {@link IncomingConnection#privateData()}).
     */
    public record Options(Optional<InetSocketAddress> localAddress, Optional<Duration> connectTimeout,
                          Optional<Duration> idleTimeout, boolean halfClose, RdmaProtocol.ConnectionOptions connection,
                          ByteString privateData) {
        public Options {
            Objects.requireNonNull(localAddress, "localAddress");
            Objects.requireNonNull(connectTimeout, "connectTimeout");
            Objects.requireNonNull(idleTimeout, "idleTimeout");
            Objects.requireNonNull(connection, "connection");
            Objects.requireNonNull(privateData, "privateData");
            if (privateData.size() > RdmaProtocol.Connect.MAX_PRIVATE_DATA) {
                throw new IllegalArgumentException("a connection request carries at most "
                        + RdmaProtocol.Connect.MAX_PRIVATE_DATA + " bytes of private data, not " + privateData.size());
            }
            if (connection.receiveInPlace().isPresent()) {
                // each element is a ByteString the stream hands on: a copy, so there is nothing to lend
                throw new IllegalArgumentException("a stream's elements are ByteStrings: receiving in place is for"
                        + " handlers of the actor API");
            }
            if (connection.receivedBatches()) {
                // the stage takes its connection's events one message at a time
                throw new IllegalArgumentException("a stream delivers element by element: received batches are for"
                        + " handlers of the actor API");
            }
        }

        /** None of them, and half-close: what the overloads without options use. */
        public static Options defaults() {
            return new Options(Optional.empty(), Optional.empty(), Optional.empty(), true,
                    RdmaProtocol.ConnectionOptions.none(), ByteString.emptyByteString());
        }

        public Options withLocalAddress(InetSocketAddress local) {
            return new Options(Optional.of(local), connectTimeout, idleTimeout, halfClose, connection, privateData);
        }

        public Options withConnectTimeout(Duration timeout) {
            return new Options(localAddress, Optional.of(timeout), idleTimeout, halfClose, connection, privateData);
        }

        public Options withIdleTimeout(Duration timeout) {
            return new Options(localAddress, connectTimeout, Optional.of(timeout), halfClose, connection, privateData);
        }

        public Options withHalfClose(boolean half) {
            return new Options(localAddress, connectTimeout, idleTimeout, half, connection, privateData);
        }

        public Options withConnectionOptions(RdmaProtocol.ConnectionOptions options) {
            return new Options(localAddress, connectTimeout, idleTimeout, halfClose, options, privateData);
        }

        public Options withPrivateData(ByteString data) {
            return new Options(localAddress, connectTimeout, idleTimeout, halfClose, connection, data);
        }
    }

    /**
     * Listens on {@code bind} once materialized; each element is a connection a peer asked for,
     * accepted when its {@link IncomingConnection#flow()} is materialized (or rejected after
     * {@code rdma-actors.accept-timeout}). Cancelling the source unbinds.
     */
    public Source<IncomingConnection, CompletionStage<ServerBinding>> bind(InetSocketAddress bind) {
        return bind(bind, DEFAULT_BACKLOG, Options.defaults());
    }

    /** As {@link #bind(InetSocketAddress)}, with a listen backlog, and the idle timeout and half-close of {@code options}. */
    public Source<IncomingConnection, CompletionStage<ServerBinding>> bind(InetSocketAddress bind, int backlog,
                                                                        Options options) {
        return Source.fromGraph(new ListenerStage(manager, bind, backlog, options, this));
    }

    public Source<IncomingConnection, CompletionStage<ServerBinding>> bind(String host, int port) {
        return bind(new InetSocketAddress(host, port));
    }

    /** Connects to {@code remote} once materialized: the flow's elements go there, the peer's come out. */
    public Flow<ByteString, ByteString, CompletionStage<OutgoingConnection>> outgoingConnection(
            InetSocketAddress remote) {
        return outgoingConnection(remote, Options.defaults());
    }

    /** As {@link #outgoingConnection(InetSocketAddress)}, with {@code options}. */
    public Flow<ByteString, ByteString, CompletionStage<OutgoingConnection>> outgoingConnection(
            InetSocketAddress remote, Options options) {
        return framed(ConnectionStage.connecting(manager, handler -> {
            RdmaProtocol.Connect connect = RdmaProtocol.Connect.to(remote, handler).withOptions(options.connection())
                    .withPrivateData(options.privateData().toArray());
            connect = options.connectTimeout().map(connect::withTimeout).orElse(connect);
            return options.localAddress().map(connect::withLocalAddress).orElse(connect);
        }, remote, settings(options), options.halfClose()), options);
    }

    public Flow<ByteString, ByteString, CompletionStage<OutgoingConnection>> outgoingConnection(String host, int port) {
        return outgoingConnection(new InetSocketAddress(host, port));
    }

    /**
     * Accepts a connection a listener's handler was asked for, as the flow of a Streams connection:
     * materializing it accepts. For a listener of the actor API that hands some of the connections
     * it is asked for to Streams (say, by their private data); the request's accept timeout runs
     * until then.
     */
    public Flow<ByteString, ByteString, NotUsed> accept(RdmaProtocol.ConnectionRequested request, Options options) {
        return framed(ConnectionStage.accepting(request.connection(), request.remote(), settings(options),
                options.halfClose()), options).mapMaterializedValue(connected -> NotUsed.getInstance());
    }

    /** Elements over a connection's bytes, each behind its length, failing after the idle timeout if any. */
    private Flow<ByteString, ByteString, CompletionStage<OutgoingConnection>> framed(ConnectionStage connection,
                                                                                    Options options) {
        Flow<ByteString, ByteString, CompletionStage<OutgoingConnection>> framed =
                Framing.simpleFramingProtocol(settings(options).maxMessageSize()).join(Flow.fromGraph(connection),
                        (notUsed, connected) -> connected);
        if (options.idleTimeout().isEmpty()) {
            return framed;
        }
        BidiFlow<ByteString, ByteString, ByteString, ByteString, NotUsed> idle =
                BidiFlow.bidirectionalIdleTimeout(options.idleTimeout().get());
        return idle.join(framed, Keep.right());
    }

    /** The settings of a connection made with {@code options}. */
    private RdmaSettings settings(Options options) {
        return settings.with(options.connection());
    }

    /** A bound listener: {@link #unbind} stops accepting; connections already handed out go on. */
    public record ServerBinding(InetSocketAddress localAddress, ActorRef<RdmaProtocol.ListenerCommand> listener,
                                CompletionStage<Done> unbound) {
        public CompletionStage<Done> unbind() {
            listener.tell(new RdmaProtocol.Unbind());
            return unbound;
        }
    }

    /** A connection a peer asked for, with the private data its request carried; materializing {@link #flow} accepts it. */
    public record IncomingConnection(InetSocketAddress localAddress, InetSocketAddress remoteAddress,
                                     ByteString privateData, Flow<ByteString, ByteString, NotUsed> flow) {
        /** Accepts the connection and runs {@code handler} on it, as Pekko's Tcp does. */
        public <M> M handleWith(Flow<ByteString, ByteString, M> handler, ClassicActorSystemProvider system) {
            return flow.joinMat(handler, (notUsed, m) -> m).run(system);
        }
    }

    public record OutgoingConnection(InetSocketAddress remoteAddress, InetSocketAddress localAddress) {
    }

    /** A Streams connection failed: it could not connect, or it broke. */
    public static final class ConnectionFailed extends RuntimeException {
        public ConnectionFailed(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
