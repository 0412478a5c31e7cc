package io.rdmaactors.actors;

import io.rdmaactors.verbs.Access;
import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.WcStatus;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * The user protocol of rdma-actors, in one place, shaped after Pekko IO's {@code Tcp}: commands to
 * the manager and to connections, and the events they answer with.
 */
public final class RdmaProtocol {

    private RdmaProtocol() {
    }

    // ------------------------------------------------------------------ to the manager

    /** What the manager ({@code Rdma.get(system).manager()}) takes. */
    public interface ManagerCommand {
    }

    /**
     * Listens on {@code bind}; the handler gets {@link Listening} or {@link CommandFailed}, then
     * requests. With {@code sharedReceiveQueue} every accepted connection receives from one SRQ
     * (the multi-QP server): receive buffers scale with the server, not with its connections.
     */
    public record Listen(InetSocketAddress bind, ActorRef<ListenerEvent> handler, int backlog,
                         boolean sharedReceiveQueue) implements ManagerCommand {
        public Listen {
            Objects.requireNonNull(bind, "bind");
            Objects.requireNonNull(handler, "handler");
            if (backlog < 0) {
                throw new IllegalArgumentException("backlog must not be negative: " + backlog);
            }
        }

        public Listen(InetSocketAddress bind, ActorRef<ListenerEvent> handler, int backlog) {
            this(bind, handler, backlog, false);
        }
    }

    /**
     * Connects to {@code remote}, offering up to 56 bytes of private data; the handler gets
     * {@link Connected} or {@link ConnectFailed} within {@code timeout}.
     */
    public record Connect(InetSocketAddress remote, ActorRef<ConnectionEvent> handler, byte[] privateData,
                          Duration timeout) implements ManagerCommand {
        public Connect {
            Objects.requireNonNull(remote, "remote");
            Objects.requireNonNull(handler, "handler");
            if (timeout != null && (timeout.isNegative() || timeout.isZero())) {
                throw new IllegalArgumentException("timeout must be positive (null: rdma-actors.connect-timeout)");
            }
            privateData = privateData == null ? new byte[0] : privateData.clone();
        }
    }

    /**
     * Joins a multicast group on a UD QP, through the device that owns {@code source} (null: the
     * route to the group decides); the handler gets {@link Joined} (with the endpoint to send to the
     * group through) or {@link CommandFailed}, then every datagram sent to the group.
     */
    public record JoinMulticast(InetSocketAddress group, InetSocketAddress source, ActorRef<MulticastEvent> handler)
            implements ManagerCommand {
        public JoinMulticast {
            Objects.requireNonNull(group, "group");
            Objects.requireNonNull(handler, "handler");
        }

        public JoinMulticast(InetSocketAddress group, ActorRef<MulticastEvent> handler) {
            this(group, null, handler);
        }
    }

    /**
     * Asks for the manager's fabric: its resource ledger, and on the soft fabric its fault
     * injection, for tests and diagnostics.
     */
    public record GetFabric(ActorRef<Fabric> replyTo) implements ManagerCommand {
    }

    // ------------------------------------------------------------------ listener events (to a bind handler)

    public sealed interface ListenerEvent permits Listening, ConnectionRequested, CommandFailed, Unbound {
    }

    public record Listening(InetSocketAddress localAddress, ActorRef<ListenerCommand> listener)
            implements ListenerEvent {
    }

    /**
     * A peer asks to connect. Answer the connection with {@link Accept} or {@link Reject} before the
     * accept timeout, or it is rejected.
     */
    public record ConnectionRequested(InetSocketAddress remote, byte[] privateData,
                                      ActorRef<ConnectionCommand> connection) implements ListenerEvent {
    }

    public record Unbound() implements ListenerEvent {
    }

    /** What a listener takes. */
    public interface ListenerCommand {
    }

    /** Stops listening; requests already handed out are unaffected. */
    public record Unbind() implements ListenerCommand {
    }

    // ------------------------------------------------------------------ connection commands

    /** What a connection takes. */
    public interface ConnectionCommand {
    }

    /** Accepts a requested connection with up to 196 bytes of private data; {@code handler} gets its events. */
    public record Accept(ActorRef<ConnectionEvent> handler, byte[] privateData) implements ConnectionCommand {
        public Accept {
            Objects.requireNonNull(handler, "handler");
            privateData = privateData == null ? new byte[0] : privateData.clone();
        }
    }

    /** Rejects a requested connection with up to 148 bytes of private data. */
    public record Reject(byte[] privateData) implements ConnectionCommand {
        public Reject {
            privateData = privateData == null ? new byte[0] : privateData.clone();
        }
    }

    /** A command that moves data; {@code ack} (if not null) comes back in its {@link Acked} or result. */
    public sealed interface DataCommand extends ConnectionCommand
            permits Send, Write, Read, FetchAdd, CompareSwap {
        Object ack();
    }

    /** A two-sided send into the peer's next receive; {@code immediate} may be null. */
    public record Send(byte[] data, Integer immediate, Object ack) implements DataCommand {
        public Send {
            data = Objects.requireNonNull(data, "data").clone();
        }

        public static Send of(byte[] data, Object ack) {
            return new Send(data, null, ack);
        }
    }

    /** An RDMA write into an exported region; with {@code immediate} it also consumes a peer receive. */
    public record Write(RemoteRegion target, long offset, byte[] data, Integer immediate, Object ack)
            implements DataCommand {
        public Write {
            Objects.requireNonNull(target, "target");
            data = Objects.requireNonNull(data, "data").clone();
        }
    }

    /** An RDMA read from an exported region; answered with {@link ReadCompleted}. */
    public record Read(RemoteRegion source, long offset, int length, Object ack) implements DataCommand {
        public Read {
            Objects.requireNonNull(source, "source");
            if (length < 0) {
                throw new IllegalArgumentException("length must not be negative: " + length);
            }
        }
    }

    /** Atomically adds to the 8 bytes at the offset; answered with {@link AtomicCompleted}. */
    public record FetchAdd(RemoteRegion target, long offset, long add, Object ack) implements DataCommand {
        public FetchAdd {
            Objects.requireNonNull(target, "target");
        }
    }

    /** Atomically swaps the 8 bytes at the offset if they equal {@code expected}; answered with {@link AtomicCompleted}. */
    public record CompareSwap(RemoteRegion target, long offset, long expected, long swap, Object ack)
            implements DataCommand {
        public CompareSwap {
            Objects.requireNonNull(target, "target");
        }
    }

    /**
     * Registers a direct buffer so the peer may access it with exactly these rights, and answers with
     * {@link Exported}. Nothing is remotely accessible unless exported. An accepting side may
     * export before {@link Accept}, to put the region in the accept's private data.
     */
    public record Export(ByteBuffer buffer, Set<Access> access, ActorRef<Exported> replyTo)
            implements ConnectionCommand {
        public Export {
            // registration pins memory for the device: only a direct buffer has a stable address
            if (!Objects.requireNonNull(buffer, "buffer").isDirect()) {
                throw new IllegalArgumentException("only a direct ByteBuffer can be exported");
            }
            Objects.requireNonNull(replyTo, "replyTo");
            access = Set.copyOf(access);
        }
    }

    public record Exported(RemoteRegion region) {
    }

    /**
     * After {@link WritingSuspended}, asks to be told {@link WritingResumed} once the send queue has
     * room again. Every data command the handler sent before this one was refused, so resending the
     * refused ones now keeps the stream in order (Pekko IO's NACK-based back-pressure).
     */
    public record ResumeWriting() implements ConnectionCommand {
    }

    /** Stops delivering {@link Received}; receives are not reposted, so the peer is held back (RNR). */
    public record SuspendReading() implements ConnectionCommand {
    }

    public record ResumeReading() implements ConnectionCommand {
    }

    /** Closes gracefully: outstanding requests complete or fail, then {@link Disconnected}. */
    public record Disconnect() implements ConnectionCommand {
    }

    /** Closes at once: outstanding requests fail, then {@link Disconnected}. */
    public record Abort() implements ConnectionCommand {
    }

    /** Loads an alternate path to the peer's {@code alternateRemote} address through local {@code port}. */
    public record LoadAlternatePath(InetSocketAddress alternateRemote, int port) implements ConnectionCommand {
    }

    /** Moves traffic to the loaded alternate path now. */
    public record MigratePath() implements ConnectionCommand {
    }

    // ------------------------------------------------------------------ connection events (to a handler)

    public sealed interface ConnectionEvent permits Connected, ConnectFailed, Received, Acked, ReadCompleted,
            AtomicCompleted, CommandFailed, WritingSuspended, WritingResumed, AlternatePathLoaded, PathMigrated,
            Disconnected {
    }

    public record Connected(ActorRef<ConnectionCommand> connection, InetSocketAddress remote,
                            InetSocketAddress local, byte[] privateData) implements ConnectionEvent {
    }

    /** Why a connect failed. */
    public sealed interface ConnectFailure {
    }

    public record AddressError(int status) implements ConnectFailure {
    }

    public record RouteError(int status) implements ConnectFailure {
    }

    public record Unreachable(int status) implements ConnectFailure {
    }

    /** The peer refused; {@code status} 28 is its own reject (with private data), 8 nobody listening. */
    public record Rejected(int status, byte[] privateData) implements ConnectFailure {
    }

    public record TimedOut(Duration after) implements ConnectFailure {
    }

    public record DeviceError(Throwable cause) implements ConnectFailure {
    }

    public record ConnectFailed(InetSocketAddress remote, ConnectFailure reason) implements ConnectionEvent {
    }

    public record Received(byte[] data, Integer immediate) implements ConnectionEvent {
    }

    public record Acked(Object token) implements ConnectionEvent {
    }

    public record ReadCompleted(Object token, byte[] data) implements ConnectionEvent {
    }

    public record AtomicCompleted(Object token, long original) implements ConnectionEvent {
    }

    /** A command could not be carried out; nothing of it happened unless {@code cause} says it failed late. */
    public record CommandFailed(Object command, Throwable cause)
            implements ConnectionEvent, ListenerEvent, MulticastEvent {
    }

    /** The send queue was full: every data command is refused until {@link ResumeWriting} is answered. */
    public record WritingSuspended() implements ConnectionEvent {
    }

    /** The answer to {@link ResumeWriting}: the send queue has room, data commands are accepted again. */
    public record WritingResumed() implements ConnectionEvent {
    }

    /** The alternate path is loaded and armed: a failure of the primary path migrates to it. */
    public record AlternatePathLoaded() implements ConnectionEvent {
    }

    /** Traffic moved to the alternate path: automatically, or as {@link MigratePath} asked. */
    public record PathMigrated() implements ConnectionEvent {
    }

    public record Disconnected(DisconnectReason reason) implements ConnectionEvent {
    }

    public sealed interface DisconnectReason {
    }

    /** The peer disconnected. */
    public record PeerClosed() implements DisconnectReason {
    }

    /** This side disconnected or aborted. */
    public record Closed() implements DisconnectReason {
    }

    /** The connection failed: device removal, a fatal QP error, the handler's death. */
    public record ErrorClosed(Throwable cause) implements DisconnectReason {
    }

    // ------------------------------------------------------------------ multicast

    /** What a multicast endpoint takes. */
    public interface MulticastCommand {
    }

    /** Sends one datagram (up to the buffer size and the path MTU) to every other member of the group. */
    public record SendToGroup(byte[] data, Object ack) implements MulticastCommand {
        public SendToGroup {
            data = Objects.requireNonNull(data, "data").clone();
        }
    }

    public record Leave() implements MulticastCommand {
    }

    public sealed interface MulticastEvent permits Joined, MulticastReceived, MulticastSent, Left, CommandFailed {
    }

    public record Joined(InetSocketAddress group, ActorRef<MulticastCommand> endpoint) implements MulticastEvent {
    }

    /** A datagram from the group, its 40-byte global routing header removed. */
    public record MulticastReceived(byte[] data, int sourceQpn) implements MulticastEvent {
    }

    public record MulticastSent(Object ack) implements MulticastEvent {
    }

    public record Left() implements MulticastEvent {
    }

    /** A work request ended in an error completion. */
    public static final class WorkRequestFailed extends RuntimeException {
        private final WcStatus status;

        public WorkRequestFailed(WcStatus status) {
            super("work request completed with " + status);
            this.status = status;
        }

        public WcStatus status() {
            return status;
        }
    }

    /** The connection closed before the command completed. */
    public static final class ConnectionClosed extends RuntimeException {
        public ConnectionClosed(String message) {
            super(message);
        }
    }
}
