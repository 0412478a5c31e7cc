package io.rdmaactors.actors.streams;

import io.rdmaactors.actors.RdmaProtocol.ConnectionCommand;
import io.rdmaactors.actors.RdmaProtocol.ConnectionEvent;
import io.rdmaactors.actors.RdmaProtocol;
import io.rdmaactors.actors.RdmaSettings;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;
import java.util.function.Function;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.Attributes;
import org.apache.pekko.stream.FlowShape;
import org.apache.pekko.stream.Inlet;
import org.apache.pekko.stream.Outlet;
import org.apache.pekko.stream.stage.AbstractGraphStageWithMaterializedValue;
import org.apache.pekko.stream.stage.AbstractInHandler;
import org.apache.pekko.stream.stage.AbstractOutHandler;
import org.apache.pekko.stream.stage.AsyncCallback;
import org.apache.pekko.stream.stage.GraphStageLogic;
import org.apache.pekko.util.ByteString;
import scala.runtime.BoxedUnit;

/**
 * One RDMA connection as a flow of bytes: the stage's actor is the connection's handler. What
 * upstream gives is cut into Sends of up to the buffer size; at most {@code window} are
 * unacknowledged. Every {@link #ACK_EVERY}th Send asks for an Acked (and the one that fills the
 * window), which stands for those before it, as a connection's completions come in order. A full
 * buffer goes at once; a partial one once the burst upstream is in has passed (the end of the
 * interpreter's run) or, while the window is full, on the next ack. So small elements travel many
 * to a message under load, a lone one without delay, and a peer that echoes sends as many per
 * message as it received. Received messages wait for downstream's pull; when {@code window} of them
 * wait, reading is suspended, which holds the peer back. The stage lives on after its ports closed
 * until the connection reports Disconnected, so no event finds it gone.
 */
final class ConnectionStage extends AbstractGraphStageWithMaterializedValue<FlowShape<ByteString, ByteString>,
        CompletionStage<RdmaStreams.OutgoingConnection>> {

    /** The ack of the end-of-stream message; a data message's is the number of Sends it acknowledges. */
    private static final Object END = "end";
    /** Sends per Acked at most: the stage's actor takes one message for these, not one each. */
    private static final int ACK_EVERY = 16;

    private final Inlet<ByteString> in = Inlet.create("RdmaConnection.in");
    private final Outlet<ByteString> out = Outlet.create("RdmaConnection.out");
    private final FlowShape<ByteString, ByteString> shape = FlowShape.of(in, out);
    /** Connects, or accepts a requested connection, with the stage's actor as the handler. */
    private final Consumer<ActorRef<ConnectionEvent>> open;
    private final String description;
    private final int window;
    private final int bufferSize;
    /** Whether finishing upstream leaves the peer's direction open (half-close) or closes the connection. */
    private final boolean halfClose;

    private ConnectionStage(Consumer<ActorRef<ConnectionEvent>> open, String description, RdmaSettings settings,
                            boolean halfClose) {
        this.open = open;
        this.description = description;
        this.window = settings.sendQueueDepth();
        // a Send is at most a buffer, and at most the connection's largest message
        this.bufferSize = Math.min(settings.bufferSize(), settings.maxMessageSize());
        this.halfClose = halfClose;
    }

    /** Connects with {@code connect}, whose handler the stage's actor becomes. */
    static ConnectionStage connecting(ActorRef<RdmaProtocol.ManagerCommand> manager,
                                      Function<ActorRef<ConnectionEvent>, RdmaProtocol.Connect> connect,
                                      InetSocketAddress remote, RdmaSettings settings, boolean halfClose) {
        return new ConnectionStage(handler -> manager.tell(connect.apply(handler)), "connection to " + remote,
                settings, halfClose);
    }

    static ConnectionStage accepting(ActorRef<ConnectionCommand> requested, InetSocketAddress remote,
                                     RdmaSettings settings, boolean halfClose) {
        return new ConnectionStage(handler -> requested.tell(RdmaProtocol.Accept.with(handler)),
                "connection from " + remote, settings, halfClose);
    }

    @Override
    public FlowShape<ByteString, ByteString> shape() {
        return shape;
    }

    @Override
    public Pair<GraphStageLogic, CompletionStage<RdmaStreams.OutgoingConnection>> createLogicAndMaterializedValuePair(
            Attributes attributes) {
        CompletableFuture<RdmaStreams.OutgoingConnection> connected = new CompletableFuture<>();
        return Pair.create(new Logic(connected), connected);
    }

    private final class Logic extends GraphStageLogic {
        private final CompletableFuture<RdmaStreams.OutgoingConnection> connected;
        private final ArrayDeque<ByteString> received = new ArrayDeque<>();
        /** Bytes from upstream not yet sent: at most one chunk beyond a buffer's worth. */
        private ByteString unsent = ByteString.emptyByteString();
        /** Sends what gathered in this run of the interpreter, once the run is over. */
        private final AsyncCallback<BoxedUnit> flush = createAsyncCallback(done -> {
            flushScheduled = false;
            send(true);
        });
        private boolean flushScheduled;
        private ActorRef<ConnectionCommand> connection;
        private int unacked;
        /** Sends since the last that asked for an Acked. */
        private int unasked;
        private boolean writerDone;
        private boolean endSent;
        private boolean endAcked;
        private boolean peerDone;
        private boolean readingSuspended;
        private boolean closeSent;
        private boolean disconnected;

        Logic(CompletableFuture<RdmaStreams.OutgoingConnection> connected) {
            super(shape);
            this.connected = connected;
            setHandler(in, new AbstractInHandler() {
                @Override
                public void onPush() {
                    unsent = unsent.concat(grab(in));
                    send(false);
                    if (!unsent.isEmpty() && !flushScheduled) {
                        flushScheduled = true;
                        flush.invoke(BoxedUnit.UNIT);
                    }
                }

                @Override
                public void onUpstreamFinish() {
                    writerDone = true;
                    send(true);
                }

                @Override
                public void onUpstreamFailure(Throwable cause) {
                    abort(cause);
                }
            });
            setHandler(out, new AbstractOutHandler() {
                @Override
                public void onPull() {
                    deliver();
                }

                @Override
                public void onDownstreamFinish(Throwable cause) {
                    // nobody reads any more: finish what was written, then close
                    cancel(in);
                    close();
                }
            });
        }

        @Override
        public void preStart() {
            setKeepGoing(true);
            open.accept(Adapter.toTyped(getStageActor(m -> {
                onEvent(m._2());
                return BoxedUnit.UNIT;
            }).ref()));
        }

        private void onEvent(Object event) {
            if (event instanceof RdmaProtocol.Connected c) {
                connection = c.connection();
                connected.complete(new RdmaStreams.OutgoingConnection(c.remote(), c.local()));
                send(true);
            } else if (event instanceof RdmaProtocol.ConnectFailed f) {
                fail(new RdmaStreams.ConnectionFailed(description + " failed: " + f.reason(), null));
            } else if (event instanceof RdmaProtocol.Received r) {
                onReceived(r);
            } else if (event instanceof RdmaProtocol.Acked a) {
                onAcked(a.token());
            } else if (event instanceof RdmaProtocol.CommandFailed f) {
                if (!(f.cause() instanceof RdmaProtocol.WorkRequestFailed
                        || f.cause() instanceof RdmaProtocol.ConnectionClosed)) {
                    abort(new RdmaStreams.ConnectionFailed(description + ": a message could not be sent", f.cause()));
                }
                // else the connection is ending: its Disconnected, which follows, says why
            } else if (event instanceof RdmaProtocol.Disconnected d) {
                onDisconnected(d.reason());
            }
        }

        private void onReceived(RdmaProtocol.Received r) {
            if (r.data().isEmpty() && Integer.valueOf(RdmaStreams.END_OF_STREAM).equals(r.immediate())) {
                peerDone = true;
            } else {
                received.add(r.data());
                if (received.size() >= window && !readingSuspended) {
                    readingSuspended = true;
                    connection.tell(new RdmaProtocol.SuspendReading());
                }
            }
            deliver();
        }

        private void onAcked(Object token) {
            if (token == END) {
                endAcked = true;
                if (!halfClose) {
                    close(); // the peer's direction ends with this side's
                }
                closeWhenBothEnded();
            } else {
                unacked -= (Integer) token;
                send(true);
            }
        }

        private void onDisconnected(RdmaProtocol.DisconnectReason reason) {
            disconnected = true;
            if (reason instanceof RdmaProtocol.ErrorClosed e) {
                fail(new RdmaStreams.ConnectionFailed(description + " broke: " + e.cause().getMessage(), e.cause()));
                return;
            }
            // the peer closed (or this side did): what arrived is still delivered, nothing more is written
            peerDone = true;
            if (!isClosed(in)) {
                cancel(in);
            }
            deliver();
        }

        /**
         * Sends what the window allows, a buffer's worth each (and a partial one if {@code partial}),
         * and pulls while less than a buffer's worth waits; then, once upstream finished and
         * everything went, the end of the stream.
         */
        private void send(boolean partial) {
            if (connection == null || disconnected) {
                return;
            }
            while (unacked < window && (unsent.size() >= bufferSize || partial && !unsent.isEmpty())) {
                int length = Math.min(bufferSize, unsent.size());
                unacked++;
                unasked++;
                Integer ack = null;
                // a full window waits for an Acked: the Send that fills it asks for one
                if (unasked == ACK_EVERY || unacked == window) {
                    ack = unasked;
                    unasked = 0;
                }
                connection.tell(RdmaProtocol.Send.of(unsent.take(length), ack));
                unsent = unsent.drop(length);
            }
            if (unsent.size() < bufferSize && !isClosed(in) && !hasBeenPulled(in)) {
                pull(in);
            }
            sendEnd();
        }

        /** Half-closes once upstream finished and all it gave was sent; the message follows them on the QP. */
        private void sendEnd() {
            if (writerDone && unsent.isEmpty() && !endSent && connection != null && !disconnected) {
                endSent = true;
                connection.tell(new RdmaProtocol.Send(ByteString.emptyByteString(), RdmaStreams.END_OF_STREAM, END));
            }
        }

        private void deliver() {
            if (!received.isEmpty() && isAvailable(out)) {
                push(out, received.poll());
                if (readingSuspended && received.size() <= window / 2) {
                    readingSuspended = false;
                    connection.tell(new RdmaProtocol.ResumeReading());
                }
            }
            if (peerDone && received.isEmpty() && !isClosed(out)) {
                complete(out);
                closeWhenBothEnded();
            }
            if (disconnected && received.isEmpty()) {
                completeStage();
            }
        }

        private void closeWhenBothEnded() {
            if (endAcked && isClosed(out)) {
                close();
            }
        }

        private void close() {
            if (connection != null && !closeSent && !disconnected) {
                closeSent = true;
                connection.tell(new RdmaProtocol.Close());
            } else if (connection == null) {
                abort(new RdmaStreams.ConnectionFailed(description + " cancelled before it connected", null));
            }
        }

        private void abort(Throwable cause) {
            if (connection != null && !disconnected) {
                connection.tell(new RdmaProtocol.Abort());
            }
            fail(cause);
        }

        private void fail(Throwable cause) {
            connected.completeExceptionally(cause);
            failStage(cause);
        }

        @Override
        public void postStop() {
            if (connection != null && !disconnected && !closeSent) {
                connection.tell(new RdmaProtocol.Abort());
            }
            connected.completeExceptionally(new RdmaStreams.ConnectionFailed(description + " stopped", null));
        }
    }
}
