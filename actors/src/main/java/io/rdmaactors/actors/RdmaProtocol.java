package io.rdmaactors.actors;

import io.rdmaactors.verbs.Access;
import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.VerbsException;
import io.rdmaactors.verbs.WcStatus;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import org.apache.pekko.actor.DeadLetterSuppression;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.util.ByteString;

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
     * the requests its {@code admission} lets through. With {@code sharedReceiveQueue} every
     * accepted connection receives from one SRQ (the multi-QP server): receive buffers scale with
     * the server, not with its connections.
     */
    public record Listen(InetSocketAddress bind, ActorRef<ListenerEvent> handler, int backlog,
                         boolean sharedReceiveQueue, Admission admission, ConnectionOptions options)
            implements ManagerCommand {
        public Listen {
            Objects.requireNonNull(bind, "bind");
            Objects.requireNonNull(handler, "handler");
            Objects.requireNonNull(admission, "admission");
            Objects.requireNonNull(options, "options");
            if (backlog < 0) {
                throw new IllegalArgumentException("backlog must not be negative: " + backlog);
            }
        }

        public Listen(InetSocketAddress bind, ActorRef<ListenerEvent> handler, int backlog,
                      boolean sharedReceiveQueue) {
            this(bind, handler, backlog, sharedReceiveQueue, Admission.all(), ConnectionOptions.none());
        }

        public Listen(InetSocketAddress bind, ActorRef<ListenerEvent> handler, int backlog) {
            this(bind, handler, backlog, false);
        }

        /** Listens with a backlog of 128, a receive queue per connection and every request admitted. */
        public static Listen on(InetSocketAddress bind, ActorRef<ListenerEvent> handler) {
            return new Listen(bind, handler, 128, false);
        }

        /** The same listener, its connections receiving from one shared receive queue. */
        public Listen withSharedReceiveQueue() {
            return new Listen(bind, handler, backlog, true, admission, options);
        }

        public Listen withAdmission(Admission rules) {
            return new Listen(bind, handler, backlog, sharedReceiveQueue, rules, options);
        }

        /** The same listener, its connections (and its shared receive queue) set up with {@code connection}. */
        public Listen withOptions(ConnectionOptions connection) {
            return new Listen(bind, handler, backlog, sharedReceiveQueue, admission, connection);
        }
    }

    /**
     * What one connection sets apart from the system's {@code rdma-actors} settings, as Pekko's
     * {@code Tcp.Connect} and {@code Tcp.Bind} take socket options: its send and receive queue
     * depths, its write queue and the largest message it sends. An empty value is the system's; a
     * bad one is refused here, naming the setting. The buffer size stays the system's: a Send up to
     * it goes straight into the peer's receive buffer, so both ends must agree on it.
     * {@code receiveInPlace}, not a system setting: see {@link #withReceiveInPlace(int)}; empty, each
     * message is copied out of its receive buffer. {@code receivedBatches}, not a system setting
     * either: see {@link #withReceivedBatches()}.
     */
    public record ConnectionOptions(OptionalInt sendQueueDepth, OptionalInt receiveQueueDepth,
                                    OptionalInt writeQueue, OptionalInt maxMessageSize, OptionalInt receiveInPlace,
                                    boolean receivedBatches) {
        public ConnectionOptions {
            Objects.requireNonNull(sendQueueDepth, "sendQueueDepth");
            Objects.requireNonNull(receiveQueueDepth, "receiveQueueDepth");
            Objects.requireNonNull(writeQueue, "writeQueue");
            Objects.requireNonNull(maxMessageSize, "maxMessageSize");
            Objects.requireNonNull(receiveInPlace, "receiveInPlace");
            atLeast(sendQueueDepth, 1, "sendQueueDepth");
            atLeast(receiveQueueDepth, 1, "receiveQueueDepth");
            atLeast(writeQueue, 0, "writeQueue");
            atLeast(maxMessageSize, 1, "maxMessageSize");
            atLeast(receiveInPlace, 1, "receiveInPlace");
        }

        private static void atLeast(OptionalInt value, int least, String name) {
            if (value.isPresent() && value.getAsInt() < least) {
                throw new IllegalArgumentException(name + " must be at least " + least + ": " + value.getAsInt());
            }
        }

        /** Every setting the system's, and each message copied out of its receive buffer. */
        public static ConnectionOptions none() {
            OptionalInt system = OptionalInt.empty();
            return new ConnectionOptions(system, system, system, system, system, false);
        }

        public ConnectionOptions withSendQueueDepth(int depth) {
            return new ConnectionOptions(OptionalInt.of(depth), receiveQueueDepth, writeQueue, maxMessageSize,
                    receiveInPlace, receivedBatches);
        }

        public ConnectionOptions withReceiveQueueDepth(int depth) {
            return new ConnectionOptions(sendQueueDepth, OptionalInt.of(depth), writeQueue, maxMessageSize,
                    receiveInPlace, receivedBatches);
        }

        public ConnectionOptions withWriteQueue(int commands) {
            return new ConnectionOptions(sendQueueDepth, receiveQueueDepth, OptionalInt.of(commands), maxMessageSize,
                    receiveInPlace, receivedBatches);
        }

        public ConnectionOptions withMaxMessageSize(int bytes) {
            return new ConnectionOptions(sendQueueDepth, receiveQueueDepth, writeQueue, OptionalInt.of(bytes),
                    receiveInPlace, receivedBatches);
        }

        /**
         * Messages of at least {@code bytes} are handed to the handler where they landed, not
         * copied: {@link Received#buffer()} is a read-only view of the receive buffer, which is
         * posted again only when the handler releases the Received ({@link Release}, or
         * {@link Send#releasing} with its next Send). Smaller ones are copied as before: a copy of
         * a few bytes costs less than the Release does (256 is a fair threshold). A handler of such
         * a connection releases each Received whose {@link Received#releasable()} says so, once
         * done reading it: a receive buffer it keeps is one fewer for the peer's messages, which
         * wait (receiver not ready) once all are held, as with verbs. Only a connection with
         * receive buffers of its own receives in place (not one on a shared receive queue). A
         * message beyond {@code buffer-size}, which arrives by rendezvous, stays in the memory it
         * was read into, lent alike ({@link Received#slice()} is null for it), and goes back to
         * the connection's pool when released.
         */
        public ConnectionOptions withReceiveInPlace(int bytes) {
            return new ConnectionOptions(sendQueueDepth, receiveQueueDepth, writeQueue, maxMessageSize,
                    OptionalInt.of(bytes), receivedBatches);
        }

        /**
         * The handler is told {@link ReceivedBatch} in place of {@link Received}: each holds the
         * messages one poll of the completion queue found (at least one), in the order they came,
         * and comes before any event told after them. A stream's reader then takes a mailbox turn
         * per poll, not per message, as a Pekko IO reader takes one {@code Tcp.Received} for the
         * bytes of many writes. Each message of a batch is released as a single one would be.
         */
        public ConnectionOptions withReceivedBatches() {
            return new ConnectionOptions(sendQueueDepth, receiveQueueDepth, writeQueue, maxMessageSize,
                    receiveInPlace, true);
        }
    }

    /**
     * Which connection requests a listener hands to its handler: at most {@code maxConnections}
     * open at once, at most {@code perSecond} a second (a burst of as many, at least one), and only
     * those {@code filter} admits. The listener rejects the rest itself; the client gets
     * {@code ConnectFailed(Rejected(28, reason))}, the reason in ASCII in the private data.
     */
    public record Admission(int maxConnections, double perSecond, RequestFilter filter) {
        public Admission {
            Objects.requireNonNull(filter, "filter");
            if (maxConnections < 1 || !(perSecond > 0)) {
                throw new IllegalArgumentException("maxConnections and perSecond must be positive: " + maxConnections
                        + ", " + perSecond);
            }
        }

        /** Decides on one request, by the peer's address and the private data it offered. */
        @FunctionalInterface
        public interface RequestFilter {
            boolean admit(InetSocketAddress remote, byte[] privateData);
        }

        public static Admission all() {
            return new Admission(Integer.MAX_VALUE, Double.POSITIVE_INFINITY, (remote, data) -> true);
        }

        public Admission withMaxConnections(int max) {
            return new Admission(max, perSecond, filter);
        }

        public Admission withRate(double requestsPerSecond) {
            return new Admission(maxConnections, requestsPerSecond, filter);
        }

        public Admission withFilter(RequestFilter admit) {
            return new Admission(maxConnections, perSecond, admit);
        }
    }

    /**
     * Connects to {@code remote}, offering up to 56 bytes of private data (a {@link RemoteRegion}
     * fits); the handler gets {@link Connected} or {@link ConnectFailed} within {@code timeout},
     * which {@link #to} leaves to {@code rdma-actors.connect-timeout}. With a {@code local} address
     * the connection goes out through the device that owns it (rdma_resolve_addr's source).
     */
    public record Connect(InetSocketAddress remote, ActorRef<ConnectionEvent> handler, byte[] privateData,
                          Optional<Duration> timeout, Optional<InetSocketAddress> local, ConnectionOptions options)
            implements ManagerCommand {
        /** rdma_connect carries at most this many bytes of private data on RC (IB CM REQ). */
        public static final int MAX_PRIVATE_DATA = 56;

        public Connect {
            Objects.requireNonNull(remote, "remote");
            Objects.requireNonNull(handler, "handler");
            Objects.requireNonNull(timeout, "timeout");
            Objects.requireNonNull(local, "local");
            Objects.requireNonNull(options, "options");
            timeout.ifPresent(t -> {
                if (t.isNegative() || t.isZero()) {
                    throw new IllegalArgumentException("timeout must be positive: " + t);
                }
            });
            privateData = checkedPrivateData(privateData, MAX_PRIVATE_DATA, "Connect");
        }

        public static Connect to(InetSocketAddress remote, ActorRef<ConnectionEvent> handler) {
            return new Connect(remote, handler, null, Optional.empty(), Optional.empty(), ConnectionOptions.none());
        }

        public Connect withPrivateData(byte[] data) {
            return new Connect(remote, handler, data, timeout, local, options);
        }

        public Connect withTimeout(Duration after) {
            return new Connect(remote, handler, privateData, Optional.of(after), local, options);
        }

        public Connect withLocalAddress(InetSocketAddress from) {
            return new Connect(remote, handler, privateData, timeout, Optional.of(from), options);
        }

        /** The same connect, the connection set up with {@code connection} where it differs from the system's. */
        public Connect withOptions(ConnectionOptions connection) {
            return new Connect(remote, handler, privateData, timeout, local, connection);
        }
    }

    private static byte[] checkedPrivateData(byte[] data, int max, String command) {
        if (data == null) {
            return new byte[0];
        }
        if (data.length > max) {
            throw new IllegalArgumentException(command + " carries at most " + max + " bytes of private data, not "
                    + data.length);
        }
        return data.clone();
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
        public GetFabric {
            Objects.requireNonNull(replyTo, "replyTo");
        }
    }

    /**
     * Fails the manager as an internal error would: its supervisor restarts it, which ends every
     * listener, connection and multicast membership (each handler hears its end) and opens the
     * fabric afresh. For tests of how a service recovers ({@code RdmaTestKit.crashManager}).
     */
    public record CrashManager(String why) implements ManagerCommand {
        public CrashManager {
            Objects.requireNonNull(why, "why");
        }
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
        /** IB CM REP's private data. */
        public static final int MAX_PRIVATE_DATA = 196;

        public Accept {
            Objects.requireNonNull(handler, "handler");
            privateData = checkedPrivateData(privateData, MAX_PRIVATE_DATA, "Accept");
        }

        public static Accept with(ActorRef<ConnectionEvent> handler) {
            return new Accept(handler, null);
        }
    }

    /** Rejects a requested connection with up to 148 bytes of private data. */
    public record Reject(byte[] privateData) implements ConnectionCommand {
        /** IB CM REJ's private data. */
        public static final int MAX_PRIVATE_DATA = 148;

        public Reject {
            privateData = checkedPrivateData(privateData, MAX_PRIVATE_DATA, "Reject");
        }
    }

    /**
     * Hands the connection to another handler: every event after this one goes to {@code handler},
     * which is watched instead of the old one (Pekko IO's {@code Register}).
     */
    public record Register(ActorRef<ConnectionEvent> handler) implements ConnectionCommand {
        public Register {
            Objects.requireNonNull(handler, "handler");
        }
    }

    /**
     * The immediate value rdma-actors keeps for itself: its control messages (of a Send larger than
     * the buffer size, of a paused reader) and a close's notice carry it, so a Send or Write of the
     * user's may not.
     */
    public static final int RESERVED_IMMEDIATE = 0x52445a56;

    private static void checkImmediate(Integer immediate) {
        if (immediate != null && immediate == RESERVED_IMMEDIATE) {
            throw new IllegalArgumentException("the immediate 0x52445a56 is reserved for rdma-actors' large messages");
        }
    }

    /**
     * A command that moves data; {@code ack} (if not null) comes back in its {@link Acked} or result.
     * Its answers go to {@code replyTo}, or to the connection's handler where that is null (each
     * command has {@code withReplyTo}): typed actors have no sender to answer, as Pekko IO does.
     */
    public sealed interface DataCommand extends ConnectionCommand
            permits Send, Write, Read, FetchAdd, CompareSwap {
        Object ack();

        ActorRef<ConnectionEvent> replyTo();
    }

    /**
     * Answers {@code command} with a {@link CommandFailed} for {@code cause} where its answer goes
     * ({@link #answerTo}); a {@link Batch} has each of its commands answered so.
     */
    static void refuse(Object command, ActorRef<? super CommandFailed> handler, Throwable cause) {
        if (command instanceof Batch batch) {
            for (DataCommand c : batch.commands()) {
                answerTo(c, handler).tell(new CommandFailed(c, cause));
            }
        } else {
            answerTo(command, handler).tell(new CommandFailed(command, cause));
        }
    }

    /**
     * Where a command's answers go: its own replyTo (a data command's, if it has one, an Export's,
     * Unexport's, RegisterMemory's or DeregisterMemory's), the handler an Accept names, or else {@code handler}.
     */
    static ActorRef<? super CommandFailed> answerTo(Object command, ActorRef<? super CommandFailed> handler) {
        if (command instanceof DataCommand d && d.replyTo() != null) {
            return d.replyTo();
        } else if (command instanceof Export e) {
            return e.replyTo();
        } else if (command instanceof Unexport u) {
            return u.replyTo();
        } else if (command instanceof RegisterMemory r) {
            return r.replyTo();
        } else if (command instanceof DeregisterMemory d) {
            return d.replyTo();
        } else if (command instanceof Accept a) {
            return a.handler(); // the handler it names waits for Connected
        }
        return handler;
    }

    /**
     * A two-sided send, arriving at the peer as one {@link Received}; {@code immediate} may be null.
     * Up to {@code buffer-size} bytes it goes into the peer's next receive; a larger one, up to
     * {@code max-message-size}, is announced and RDMA-read by the peer (rendezvous), in its place
     * among the others. With an {@code ack}, answered with {@link Acked} once the peer has it.
     * {@code releasing}, if not null, is a {@link Received} whose bytes the connection takes back
     * once this Send is posted, as {@link Release} does, without a message of its own
     * ({@link #releasing(Received)}). The bytes are {@code data}, copied into a registered send
     * buffer as the Send is posted, or, where {@code data} is null, {@code from}: memory this
     * connection registered ({@link RegisterMemory}), sent from where it is ({@link #of(LocalRegion.Slice)}).
     */
    public record Send(ByteString data, Integer immediate, Object ack, ActorRef<ConnectionEvent> replyTo,
                       Received releasing, LocalRegion.Slice from) implements DataCommand {
        public Send {
            if ((data == null) == (from == null)) {
                throw new IllegalArgumentException("a Send carries either data or a slice of registered memory");
            }
            checkImmediate(immediate);
        }

        /** The payload's size, not its bytes: a failure's log line stays one line. */
        @Override
        public String toString() {
            return "Send[" + size() + " bytes" + (from == null ? "" : " from registered memory")
                    + (immediate == null ? "" : ", immediate=" + immediate) + ", ack=" + ack + "]";
        }

        /** How many bytes it carries. */
        public int size() {
            return data != null ? data.size() : from.length();
        }

        public Send(ByteString data, Integer immediate, Object ack, ActorRef<ConnectionEvent> replyTo,
                    Received releasing) {
            this(Objects.requireNonNull(data, "data"), immediate, ack, replyTo, releasing, null);
        }

        public Send(ByteString data, Integer immediate, Object ack, ActorRef<ConnectionEvent> replyTo) {
            this(data, immediate, ack, replyTo, null);
        }

        public Send(ByteString data, Integer immediate, Object ack) {
            this(data, immediate, ack, null, null);
        }

        public static Send of(ByteString data) {
            return new Send(data, null, null);
        }

        public static Send of(ByteString data, Object ack) {
            return new Send(data, null, ack);
        }

        /** Copies {@code data}: the array may change after this returns. */
        public static Send of(byte[] data, Object ack) {
            return new Send(ByteString.fromArray(data), null, ack);
        }

        /**
         * Sends {@code bytes} from the memory they are in, without a copy: they must stay unchanged
         * until the Send is acknowledged (ask for an ack with {@link #withAck}) or the peer's answer
         * to it came. A slice longer than {@code buffer-size} goes by rendezvous from where it is:
         * its bytes alone are registered for the peer to read until it has them.
         */
        public static Send of(LocalRegion.Slice bytes) {
            return new Send(null, null, null, null, null, Objects.requireNonNull(bytes, "bytes"));
        }

        public Send withImmediate(int value) {
            return new Send(data, value, ack, replyTo, releasing, from);
        }

        public Send withAck(Object token) {
            return new Send(data, immediate, token, replyTo, releasing, from);
        }

        public Send withReplyTo(ActorRef<ConnectionEvent> to) {
            return new Send(data, immediate, ack, to, releasing, from);
        }

        /**
         * This Send, releasing {@code received} once it is posted: its data is copied then, so an
         * echo of {@code received.data()} may release it so, and so may the next Send of a
         * request-response handler for the answer it got. What {@link Release} costs in a message
         * of its own, this saves. As after a Release, no command told after this one may carry the
         * bytes. A Send refused (CommandFailed) releases nothing: its data stays the handler's to
         * send again.
         */
        public Send releasing(Received received) {
            return new Send(data, immediate, ack, replyTo, Objects.requireNonNull(received, "received"), from);
        }
    }

    /**
     * An RDMA write into an exported region; with {@code immediate} it also consumes a peer receive.
     * Its bytes are {@code data}, copied into a send buffer (so at most {@code buffer-size}), or,
     * where {@code data} is null, {@code from}: memory this connection registered, written from
     * where it is, of any length ({@link #of(RemoteRegion, long, LocalRegion.Slice, Object)}).
     */
    public record Write(RemoteRegion target, long offset, ByteString data, Integer immediate, Object ack,
                        ActorRef<ConnectionEvent> replyTo, LocalRegion.Slice from) implements DataCommand {
        public Write {
            Objects.requireNonNull(target, "target");
            if ((data == null) == (from == null)) {
                throw new IllegalArgumentException("a Write carries either data or a slice of registered memory");
            }
            checkImmediate(immediate);
            target.at(offset, data != null ? data.size() : from.length());
        }

        /** The payload's size, not its bytes: a failure's log line stays one line. */
        @Override
        public String toString() {
            return "Write[" + size() + " bytes" + (from == null ? "" : " from registered memory") + " at " + target
                    + "+" + offset + (immediate == null ? "" : ", immediate=" + immediate) + ", ack=" + ack + "]";
        }

        /** How many bytes it writes. */
        public int size() {
            return data != null ? data.size() : from.length();
        }

        public Write(RemoteRegion target, long offset, ByteString data, Integer immediate, Object ack,
                     ActorRef<ConnectionEvent> replyTo) {
            this(target, offset, Objects.requireNonNull(data, "data"), immediate, ack, replyTo, null);
        }

        public Write(RemoteRegion target, long offset, ByteString data, Integer immediate, Object ack) {
            this(target, offset, data, immediate, ack, null);
        }

        public static Write of(RemoteRegion target, long offset, ByteString data, Object ack) {
            return new Write(target, offset, data, null, ack);
        }

        /** Copies {@code data}: the array may change after this returns. */
        public static Write of(RemoteRegion target, long offset, byte[] data, Object ack) {
            return new Write(target, offset, ByteString.fromArray(data), null, ack);
        }

        /**
         * Writes {@code bytes} from the memory they are in, without a copy and of any length the
         * target holds: they must stay unchanged until the Write is acknowledged.
         */
        public static Write of(RemoteRegion target, long offset, LocalRegion.Slice bytes, Object ack) {
            return new Write(target, offset, null, null, ack, null, Objects.requireNonNull(bytes, "bytes"));
        }

        public Write withImmediate(int value) {
            return new Write(target, offset, data, value, ack, replyTo, from);
        }

        public Write withReplyTo(ActorRef<ConnectionEvent> to) {
            return new Write(target, offset, data, immediate, ack, to, from);
        }
    }

    /**
     * An RDMA read from an exported region; answered with {@link ReadCompleted}. It returns the
     * region as it was after what this connection posted before it, and before what it posts
     * after: those wait until the Read completed (a fence), as verbs alone would let them
     * overtake its data. The bytes land in a send buffer and come back as the ReadCompleted's
     * data (so at most {@code buffer-size}), or, with {@code into}, in memory this connection
     * registered, of any length, and the ReadCompleted's data is empty
     * ({@link #into(RemoteRegion, long, LocalRegion.Slice, Object)}).
     */
    public record Read(RemoteRegion source, long offset, int length, Object ack, ActorRef<ConnectionEvent> replyTo,
                       LocalRegion.Slice into) implements DataCommand {
        public Read {
            Objects.requireNonNull(source, "source");
            if (length < 0) {
                throw new IllegalArgumentException("length must not be negative: " + length);
            }
            if (into != null && into.length() != length) {
                throw new IllegalArgumentException("a Read of " + length + " bytes into a slice of " + into.length());
            }
            source.at(offset, length);
        }

        public Read(RemoteRegion source, long offset, int length, Object ack, ActorRef<ConnectionEvent> replyTo) {
            this(source, offset, length, ack, replyTo, null);
        }

        public Read(RemoteRegion source, long offset, int length, Object ack) {
            this(source, offset, length, ack, null);
        }

        public static Read of(RemoteRegion source, long offset, int length, Object ack) {
            return new Read(source, offset, length, ack);
        }

        /** Reads {@code into.length()} bytes straight into registered memory, without a copy. */
        public static Read into(RemoteRegion source, long offset, LocalRegion.Slice into, Object ack) {
            return new Read(source, offset, Objects.requireNonNull(into, "into").length(), ack, null, into);
        }

        public Read withReplyTo(ActorRef<ConnectionEvent> to) {
            return new Read(source, offset, length, ack, to, into);
        }
    }

    /** Atomically adds to the 8 bytes at the offset; answered with {@link AtomicCompleted}. */
    public record FetchAdd(RemoteRegion target, long offset, long add, Object ack, ActorRef<ConnectionEvent> replyTo)
            implements DataCommand {
        public FetchAdd {
            Objects.requireNonNull(target, "target");
            target.at(offset, 8);
        }

        public FetchAdd(RemoteRegion target, long offset, long add, Object ack) {
            this(target, offset, add, ack, null);
        }

        public FetchAdd withReplyTo(ActorRef<ConnectionEvent> to) {
            return new FetchAdd(target, offset, add, ack, to);
        }
    }

    /** Atomically swaps the 8 bytes at the offset if they equal {@code expected}; answered with {@link AtomicCompleted}. */
    public record CompareSwap(RemoteRegion target, long offset, long expected, long swap, Object ack,
                              ActorRef<ConnectionEvent> replyTo) implements DataCommand {
        public CompareSwap {
            Objects.requireNonNull(target, "target");
            target.at(offset, 8);
        }

        public CompareSwap(RemoteRegion target, long offset, long expected, long swap, Object ack) {
            this(target, offset, expected, swap, ack, null);
        }

        public CompareSwap withReplyTo(ActorRef<ConnectionEvent> to) {
            return new CompareSwap(target, offset, expected, swap, ack, to);
        }
    }

    /**
     * Data commands in one message: the connection takes them in order, as if each was told right
     * after the one before, and answers each as it would have, to its own {@code replyTo} or the
     * handler (a refused one refused alone). What a list of work requests is to
     * {@code ibv_post_send} and {@code CompoundWrite} to Pekko IO's {@code Tcp}: a handler with
     * several messages at hand (a stream's window) pays one mailbox message and one doorbell for
     * them, not one each.
     */
    public record Batch(List<DataCommand> commands) implements ConnectionCommand {
        public Batch {
            commands = List.copyOf(commands); // no nulls
            if (commands.isEmpty()) {
                throw new IllegalArgumentException("a Batch carries at least one command");
            }
        }

        public static Batch of(DataCommand... commands) {
            return new Batch(List.of(commands));
        }

        /** The commands' count, not the commands: a failure's log line stays one line. */
        @Override
        public String toString() {
            return "Batch[" + commands.size() + " commands]";
        }
    }

    /**
     * Registers a direct buffer so the peer may access it with exactly these remote rights, and
     * answers with {@link Exported}. Nothing is remotely accessible unless exported, and only by this
     * connection's peer: on a listener's shared receive queue, whose connections share one
     * protection domain, the region's key is a memory window bound to this connection's QP. An
     * accepting side may export before {@link Accept}, to put the region in the accept's private
     * data, except on a shared receive queue, where the window is bound once the connection is
     * established (an export before is refused).
     */
    public record Export(ByteBuffer buffer, Set<Access> access, ActorRef<ExportReply> replyTo)
            implements ConnectionCommand {
        public Export {
            // registration pins memory for the device: only a direct buffer has a stable address
            if (!Objects.requireNonNull(buffer, "buffer").isDirect()) {
                throw new IllegalArgumentException("only a direct ByteBuffer can be exported");
            }
            for (Access right : access) {
                if (!right.isRemote()) {
                    throw new IllegalArgumentException("an export grants remote rights (REMOTE_READ, REMOTE_WRITE,"
                            + " REMOTE_ATOMIC), not " + right);
                }
            }
            Objects.requireNonNull(replyTo, "replyTo");
            access = Set.copyOf(access);
        }
    }

    /** What an {@link Export} is answered with. */
    public sealed interface ExportReply permits Exported, CommandFailed {
    }

    public record Exported(RemoteRegion region) implements ExportReply {
    }

    /**
     * Revokes an export: the region is deregistered, so its rkey stops working, and the peer's
     * later accesses complete with REM_ACCESS_ERR (which ends the peer's connection, as any remote
     * access error does). Answered with {@link Unexported}; a region this connection did not
     * export is refused with {@link CommandFailed}.
     */
    public record Unexport(RemoteRegion region, ActorRef<UnexportReply> replyTo) implements ConnectionCommand {
        public Unexport {
            Objects.requireNonNull(region, "region");
            Objects.requireNonNull(replyTo, "replyTo");
        }
    }

    /** What an {@link Unexport} is answered with. */
    public sealed interface UnexportReply permits Unexported, CommandFailed {
    }

    public record Unexported(RemoteRegion region) implements UnexportReply {
    }

    /**
     * Registers a direct buffer, from its position to its limit, for this side's own use: Sends and
     * Writes from it ({@link Send#of(LocalRegion.Slice)},
     * {@link Write#of(RemoteRegion, long, LocalRegion.Slice, Object)}) and Reads into it
     * ({@link Read#into}), which then go without a copy. The peer gets no access to it
     * ({@link Export} gives that). Answered with {@link MemoryRegistered}; to the connection
     * {@code Connected} names, once connected.
     */
    public record RegisterMemory(ByteBuffer buffer, ActorRef<RegisterMemoryReply> replyTo)
            implements ConnectionCommand {
        public RegisterMemory {
            // registration pins memory for the device: only a direct buffer has a stable address
            if (!Objects.requireNonNull(buffer, "buffer").isDirect()) {
                throw new IllegalArgumentException("only a direct ByteBuffer can be registered");
            }
            Objects.requireNonNull(replyTo, "replyTo");
        }
    }

    /**
     * What a {@link RegisterMemory} is answered with: a connection event too, so the handler may
     * take it itself ({@code ctx.getSelf().narrow()}).
     */
    public sealed interface RegisterMemoryReply extends ConnectionEvent permits MemoryRegistered, CommandFailed {
    }

    public record MemoryRegistered(LocalRegion region) implements RegisterMemoryReply {
    }

    /**
     * Deregisters memory this connection registered, once the commands using it that were told
     * before have completed; commands using it told after are refused. Answered with
     * {@link MemoryDeregistered}; a region of another connection with {@link CommandFailed}. The
     * connection's end deregisters what is left.
     */
    public record DeregisterMemory(LocalRegion region, ActorRef<DeregisterMemoryReply> replyTo)
            implements ConnectionCommand {
        public DeregisterMemory {
            Objects.requireNonNull(region, "region");
            Objects.requireNonNull(replyTo, "replyTo");
        }
    }

    /** What a {@link DeregisterMemory} is answered with, a connection event too. */
    public sealed interface DeregisterMemoryReply extends ConnectionEvent permits MemoryDeregistered, CommandFailed {
    }

    public record MemoryDeregistered(LocalRegion region) implements DeregisterMemoryReply {
    }

    /**
     * After {@link WritingSuspended}, asks to be told {@link WritingResumed} once the send queue has
     * room again. Every data command the handler sent since the suspension was refused, so resending
     * the refused ones now keeps the stream in order (Pekko IO's NACK-based back-pressure). Only a
     * handler that fills the send queue and the write queue ({@code rdma-actors.write-queue}) sees it.
     */
    public record ResumeWriting() implements ConnectionCommand {
    }

    /** Stops delivering {@link Received}; receives are not reposted, so the peer is held back (RNR). */
    public record SuspendReading() implements ConnectionCommand {
    }

    public record ResumeReading() implements ConnectionCommand {
    }

    /**
     * Hands back the bytes of a {@link Received} the handler is done with: the connection copies a
     * later message into them instead of into a new array, which saves the allocation and its
     * cache misses (docs/tuning.md). A handler that sends next can save this message too:
     * {@link Send#releasing(Received)} releases when that Send is posted. After it, neither
     * the data nor anything made from it without a copy may be used, except by commands told to
     * this connection before it: a Send or Write of the data is copied when it is posted, and a
     * release that finds such a command still waiting for room lets the bytes go to the garbage
     * collector instead. A second release of the same Received, or one that is not
     * {@link Received#releasable()}, does nothing; so does a release to a closed connection. A
     * message received in place gives its receive buffer back, posted for a later message at once.
     */
    public record Release(Received received) implements ConnectionCommand, DeadLetterSuppression {
        public Release {
            Objects.requireNonNull(received, "received");
        }
    }

    /**
     * Closes gracefully: what was sent before completes (or fails) first, then the connection
     * disconnects without waiting for the peer, and the handler gets {@code Disconnected(Closed)}.
     */
    public record Close() implements ConnectionCommand {
    }

    /**
     * As {@link Close}, but ends only once the peer confirmed the disconnect (its DREP, or the CM's
     * timeout): {@code Disconnected(ConfirmedClosed)}.
     */
    public record ConfirmedClose() implements ConnectionCommand {
    }

    /** Closes at once: outstanding requests fail, then {@code Disconnected(Aborted)}. */
    public record Abort() implements ConnectionCommand {
    }

    /** Loads an alternate path to the peer's {@code alternateRemote} address through local {@code port}. */
    public record LoadAlternatePath(InetSocketAddress alternateRemote, int port) implements ConnectionCommand {
    }

    /** Moves traffic to the loaded alternate path now. */
    public record MigratePath() implements ConnectionCommand {
    }

    // ------------------------------------------------------------------ connection events (to a handler)

    public sealed interface ConnectionEvent permits Connected, ConnectFailed, Received, ReceivedBatch, Acked,
            ReadCompleted, AtomicCompleted, CommandFailed, WritingSuspended, WritingResumed, AlternatePathLoaded,
            PathMigrated, Disconnected, RegisterMemoryReply, DeregisterMemoryReply {
    }

    public record Connected(ActorRef<ConnectionCommand> connection, InetSocketAddress remote,
                            InetSocketAddress local, byte[] privateData) implements ConnectionEvent {
    }

    /** Why a connect failed. */
    public sealed interface ConnectFailure {
    }

    /** A failure's name and status with the errno it stands for: {@code AddressError(-99 EADDRNOTAVAIL)}. */
    private static String withErrno(String failure, int status) {
        return failure + "(" + status + " " + VerbsException.errnoName(status) + ")";
    }

    /**
     * The address did not resolve: {@code status} is rdma_cm's negative errno (-EADDRNOTAVAIL, -99,
     * for a host name that does not resolve; -ENETUNREACH, -101, for an address off the fabric).
     */
    public record AddressError(int status) implements ConnectFailure {
        @Override
        public String toString() {
            return withErrno("AddressError", status);
        }
    }

    /** No route to the resolved address: {@code status} is rdma_cm's negative errno. */
    public record RouteError(int status) implements ConnectFailure {
        @Override
        public String toString() {
            return withErrno("RouteError", status);
        }
    }

    /** The peer did not answer the CM (-ETIMEDOUT, -110) or its link refused (-EACCES, -ECONNRESET). */
    public record Unreachable(int status) implements ConnectFailure {
        @Override
        public String toString() {
            return withErrno("Unreachable", status);
        }
    }

    /** Nobody listens at the address: the CM rejected the request as for an unknown service (IB CM reason 8). */
    public record NoListener() implements ConnectFailure {
    }

    /** The listener refused, with {@link Reject} or by its admission rules; {@code status} is the CM's reason (28). */
    public record Rejected(int status, byte[] privateData) implements ConnectFailure {
    }

    public record TimedOut(Duration after) implements ConnectFailure {
    }

    public record DeviceError(Throwable cause) implements ConnectFailure {
    }

    public record ConnectFailed(InetSocketAddress remote, ConnectFailure reason) implements ConnectionEvent {
    }

    /**
     * One message from the peer: a Send's bytes, or none for a write with immediate. The bytes are
     * the handler's. A handler done with a {@link #releasable()} one may hand its bytes back, with
     * its next Send ({@link Send#releasing}) or with {@link Release}, for the connection to fill
     * with a later message instead of allocating. On a connection that receives in place
     * ({@link ConnectionOptions#withReceiveInPlace(int)}) the bytes of a message of the size it names
     * stay where they landed, read through {@link #buffer()}: in the receive buffer, or, beyond
     * {@code buffer-size}, in the memory the rendezvous read them into; the handler must release
     * them.
     */
    public static final class Received implements ConnectionEvent {
        private static final VarHandle LENT;

        static {
            try {
                LENT = MethodHandles.lookup().findVarHandle(Received.class, "lent", Object.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        /**
         * A receive buffer lent to the handler: receive slot {@code slot} of the connection that
         * owns {@code region}, its receive buffers; the message starts {@code offset} bytes into it.
         */
        record Slot(LocalRegion region, int slot, int offset) {
        }

        /** The memory a large message was read into, registered by the connection whose buffers are {@code owner}. */
        record ReadInto(Object owner, MemoryRegion region) {
        }

        /** Null while an in-place message's bytes were not asked for as a ByteString. */
        private ByteString data;
        /** An in-place message's receive buffer, read-only; null for a copied one. */
        private final ByteBuffer view;
        private final Integer immediate;
        /**
         * What the connection may take back until it is released (then null): the array under
         * {@code data} (a byte[]), or where an in-place message is (a {@link Slot} or, a large one,
         * {@link ReadInto}).
         */
        @SuppressWarnings("unused") // through LENT
        private Object lent;

        public Received(ByteString data, Integer immediate) {
            this(data, immediate, null);
        }

        Received(ByteString data, Integer immediate, byte[] lent) {
            this.data = Objects.requireNonNull(data, "data");
            this.view = null;
            this.immediate = immediate;
            this.lent = lent;
        }

        /** A message left where it landed ({@link Slot} or {@link ReadInto}): {@code view} is its bytes, read-only. */
        Received(ByteBuffer view, Integer immediate, Object where) {
            this.view = Objects.requireNonNull(view, "view");
            this.immediate = immediate;
            this.lent = Objects.requireNonNull(where, "where");
        }

        /**
         * The bytes as a ByteString. Of a message received in place, a copy made at the first call
         * (which must come before its release: the buffer carries later messages after it).
         */
        public ByteString data() {
            ByteString bytes = data;
            if (bytes == null) {
                if (LENT.getOpaque(this) == null) {
                    throw new IllegalStateException("released: the receive buffer carries later messages");
                }
                bytes = ByteString.fromByteBuffer(view.duplicate());
                data = bytes; // a ByteString's fields are final: another thread sees it whole or not at all
            }
            return bytes;
        }

        /**
         * The bytes, read-only, from position 0 to the limit: of a message received in place, the
         * receive buffer itself, without a copy, until the handler releases it; of any other, a
         * view of {@link #data()}. Each call returns a view of its own.
         */
        public ByteBuffer buffer() {
            return view != null ? view.duplicate() : data.asByteBuffer();
        }

        /**
         * A message received in place as a slice of its receive buffer, to send or write on from
         * where it is ({@link Send#of(LocalRegion.Slice)}, {@link Write#of(RemoteRegion, long,
         * LocalRegion.Slice, Object)}) on the connection it came from (a Read into it is refused);
         * null for any other message, or once released. A Send of it that
         * {@link Send#releasing releases} it gives the buffer back once it completed, not once
         * posted; after any other command of it, release it once that command was acknowledged.
         */
        public LocalRegion.Slice slice() {
            return LENT.getOpaque(this) instanceof Slot s ? new LocalRegion.Slice(s.region(), s.offset(), size()) : null;
        }

        /** The number of bytes, without copying an in-place message's. */
        public int size() {
            return view != null ? view.remaining() : data.size();
        }

        public Integer immediate() {
            return immediate;
        }

        /**
         * Whether a release would give the connection something back: a message received in place,
         * or one of at least 256 bytes and at most {@code buffer-size} that came into the
         * connection's own receive queue (not a shared one's), not yet released. Smaller ones cost
         * less to allocate than a Release does.
         */
        public boolean releasable() {
            return LENT.getOpaque(this) != null;
        }

        /** The array under {@code data}, to the first caller only: a second Release finds none. */
        byte[] takeArray() {
            Object lent = LENT.getOpaque(this);
            return lent instanceof byte[] array && LENT.compareAndSet(this, lent, null) ? array : null;
        }

        /** The memory of {@code owner}'s a large message was read into, to the first caller only; else null. */
        MemoryRegion takeReadInto(Object owner) {
            Object lent = LENT.getOpaque(this);
            return lent instanceof ReadInto r && r.owner() == owner && LENT.compareAndSet(this, lent, null)
                    ? r.region() : null;
        }

        /** The receive slot of {@code owner}'s this message was left in, to the first caller only; else -1. */
        int takeSlot(Object owner) {
            Object lent = LENT.getOpaque(this);
            return lent instanceof Slot s && s.region().owner == owner && LENT.compareAndSet(this, lent, null)
                    ? s.slot() : -1;
        }

        /** The bytes, or null for a message received in place whose buffer went back before they were asked for. */
        private ByteString bytesIfKnown() {
            return data != null || LENT.getOpaque(this) != null ? data() : null;
        }

        /** By bytes and immediate; a released in-place message, whose bytes are gone, equals only itself. */
        @Override
        public boolean equals(Object o) {
            if (this == o) {
                return true;
            }
            if (!(o instanceof Received r)) {
                return false;
            }
            ByteString mine = bytesIfKnown();
            ByteString theirs = r.bytesIfKnown();
            return mine != null && mine.equals(theirs) && Objects.equals(immediate, r.immediate);
        }

        @Override
        public int hashCode() {
            ByteString bytes = bytesIfKnown();
            return bytes == null ? System.identityHashCode(this) : 31 * bytes.hashCode() + Objects.hashCode(immediate);
        }

        @Override
        public String toString() {
            return "Received[" + size() + " bytes" + (view == null ? "" : " in place")
                    + (immediate == null ? "" : ", immediate=" + immediate) + "]";
        }
    }

    /**
     * Messages received in order, one poll's, in place of one {@link Received} each, for a connection
     * whose options ask for batches ({@link ConnectionOptions#withReceivedBatches()}).
     */
    public record ReceivedBatch(List<Received> messages) implements ConnectionEvent {
        public ReceivedBatch {
            messages = List.copyOf(messages); // no nulls
            if (messages.isEmpty()) {
                throw new IllegalArgumentException("a ReceivedBatch carries at least one message");
            }
        }

        /** The messages' count, not the messages: a log line stays one line. */
        @Override
        public String toString() {
            return "ReceivedBatch[" + messages.size() + " messages]";
        }
    }

    public record Acked(Object token) implements ConnectionEvent {
    }

    public record ReadCompleted(Object token, ByteString data) implements ConnectionEvent {
    }

    public record AtomicCompleted(Object token, long original) implements ConnectionEvent {
    }

    /** A command could not be carried out; nothing of it happened unless {@code cause} says it failed late. */
    public record CommandFailed(Object command, Throwable cause)
            implements ConnectionEvent, ListenerEvent, MulticastEvent, ExportReply, UnexportReply, RegisterMemoryReply,
            DeregisterMemoryReply {
    }

    /**
     * The send queue and the write queue were full: every data command is refused until
     * {@link ResumeWriting} is answered.
     */
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

    /**
     * The connection ended: the last event its handler hears. Like Pekko IO's ConnectionClosed, one
     * that finds its handler gone (a stream that failed first) is no dead letter worth a log line.
     */
    public record Disconnected(DisconnectReason reason) implements ConnectionEvent, DeadLetterSuppression {
    }

    public sealed interface DisconnectReason {
    }

    /** The peer closed the connection with {@link Close} or {@link ConfirmedClose}. */
    public record PeerClosed() implements DisconnectReason {
    }

    /** This side's {@link Close}. */
    public record Closed() implements DisconnectReason {
    }

    /** This side's {@link ConfirmedClose}, the peer's confirmation received. */
    public record ConfirmedClosed() implements DisconnectReason {
    }

    /** This side's {@link Abort}. */
    public record Aborted() implements DisconnectReason {
    }

    /**
     * The connection failed: an error completion (the first one's {@link WorkRequestFailed}, even
     * when the peer's disconnect arrived first), a fatal QP event, device removal, the handler's
     * death, or a peer that disconnected without closing ({@link PeerFailed}).
     */
    public record ErrorClosed(Throwable cause) implements DisconnectReason {
    }

    /**
     * The cause of an {@link ErrorClosed} when the peer disconnected without closing: it aborted
     * (as a TCP peer's reset), its handler, process or rdma-actors stopped, or the path to it
     * failed. rdma_cm reports every disconnect alike, so a Close or ConfirmedClose says in band,
     * last, that it closes.
     */
    public static final class PeerFailed extends RuntimeException {
        public PeerFailed(String message) {
            super(message, null, false, false);
        }
    }

    // ------------------------------------------------------------------ multicast

    /** What a multicast endpoint takes. */
    public interface MulticastCommand {
    }

    /** Sends one datagram (up to the buffer size and the path MTU) to every other member of the group. */
    public record SendToGroup(ByteString data, Object ack) implements MulticastCommand {
        public SendToGroup {
            Objects.requireNonNull(data, "data");
        }

        /** Copies {@code data}: the array may change after this returns. */
        public static SendToGroup of(byte[] data, Object ack) {
            return new SendToGroup(ByteString.fromArray(data), ack);
        }
    }

    public record Leave() implements MulticastCommand {
    }

    public sealed interface MulticastEvent permits Joined, MulticastReceived, MulticastSent, Left, CommandFailed {
    }

    public record Joined(InetSocketAddress group, ActorRef<MulticastCommand> endpoint) implements MulticastEvent {
    }

    /** A datagram from the group, its 40-byte global routing header removed. */
    public record MulticastReceived(ByteString data, int sourceQpn) implements MulticastEvent {
    }

    public record MulticastSent(Object ack) implements MulticastEvent {
    }

    public record Left() implements MulticastEvent {
    }

    /** The device under a connection was removed or failed: every connection on it ends with this. */
    public static final class DeviceLost extends RuntimeException {
        private final String device;

        public DeviceLost(String device, String what) {
            super("device " + device + " " + what, null, false, false);
            this.device = device;
        }

        /** The device's name, as {@code ibv_get_device_name} gives it. */
        public String device() {
            return device;
        }
    }

    /** A work request ended in an error completion. */
    public static final class WorkRequestFailed extends RuntimeException {
        private final WcStatus status;

        public WorkRequestFailed(WcStatus status) {
            super("work request completed with " + status + ": " + status.description());
            this.status = status;
        }

        public WcStatus status() {
            return status;
        }
    }

    /**
     * The connection closed before the command completed, or ended for a reason of this side (its
     * handler stopped, the system stopped). An outcome, not a bug: like Pekko's NoStackTrace it
     * carries no stack trace, which a system closing thousands of connections would pay for each.
     */
    public static final class ConnectionClosed extends RuntimeException {
        public ConnectionClosed(String message) {
            super(message, null, false, false);
        }
    }
}
