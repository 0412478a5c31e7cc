package io.rdmaactors.actors.streams;

import io.rdmaactors.actors.RdmaProtocol;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.Attributes;
import org.apache.pekko.stream.Outlet;
import org.apache.pekko.stream.SourceShape;
import org.apache.pekko.stream.stage.AbstractGraphStageWithMaterializedValue;
import org.apache.pekko.stream.stage.AbstractOutHandler;
import org.apache.pekko.stream.stage.GraphStageLogic;
import org.apache.pekko.util.ByteString;
import scala.runtime.BoxedUnit;

/**
 * A listener as a source of incoming connections: the stage's actor is the bind handler. Requests
 * wait for downstream's pull; one never materialized is rejected by the accept timeout. Cancelling
 * unbinds, and the stage ends once the listener says Unbound.
 */
final class ListenerStage extends AbstractGraphStageWithMaterializedValue<SourceShape<RdmaStreams.IncomingConnection>,
        CompletionStage<RdmaStreams.ServerBinding>> {

    private final Outlet<RdmaStreams.IncomingConnection> out = Outlet.create("RdmaListener.out");
    private final SourceShape<RdmaStreams.IncomingConnection> shape = SourceShape.of(out);
    private final ActorRef<RdmaProtocol.ManagerCommand> manager;
    private final InetSocketAddress bind;
    private final int backlog;
    private final RdmaStreams.Options options;
    private final RdmaStreams streams;

    ListenerStage(ActorRef<RdmaProtocol.ManagerCommand> manager, InetSocketAddress bind, int backlog,
                  RdmaStreams.Options options, RdmaStreams streams) {
        this.manager = manager;
        this.bind = bind;
        this.backlog = backlog;
        this.options = options;
        this.streams = streams;
    }

    @Override
    public SourceShape<RdmaStreams.IncomingConnection> shape() {
        return shape;
    }

    @Override
    public Pair<GraphStageLogic, CompletionStage<RdmaStreams.ServerBinding>> createLogicAndMaterializedValuePair(
            Attributes attributes) {
        CompletableFuture<RdmaStreams.ServerBinding> binding = new CompletableFuture<>();
        return Pair.create(new Logic(binding), binding);
    }

    private final class Logic extends GraphStageLogic {
        private final CompletableFuture<RdmaStreams.ServerBinding> binding;
        private final CompletableFuture<Done> unbound = new CompletableFuture<>();
        private final ArrayDeque<RdmaStreams.IncomingConnection> requested = new ArrayDeque<>();
        private ActorRef<RdmaProtocol.ListenerCommand> listener;
        private InetSocketAddress localAddress;
        private boolean cancelled;

        Logic(CompletableFuture<RdmaStreams.ServerBinding> binding) {
            super(shape);
            this.binding = binding;
            setHandler(out, new AbstractOutHandler() {
                @Override
                public void onPull() {
                    if (!requested.isEmpty()) {
                        push(out, requested.poll());
                    }
                }

                @Override
                public void onDownstreamFinish(Throwable cause) {
                    cancelled = true;
                    if (listener != null) {
                        listener.tell(new RdmaProtocol.Unbind());
                    }
                }
            });
        }

        @Override
        public void preStart() {
            setKeepGoing(true);
            ActorRef<RdmaProtocol.ListenerEvent> self = Adapter.toTyped(getStageActor(m -> {
                onEvent(m._2());
                return BoxedUnit.UNIT;
            }).ref());
            manager.tell(new RdmaProtocol.Listen(bind, self, backlog).withOptions(options.connection()));
        }

        private void onEvent(Object event) {
            if (event instanceof RdmaProtocol.Listening l) {
                listener = l.listener();
                localAddress = l.localAddress();
                binding.complete(new RdmaStreams.ServerBinding(l.localAddress(), l.listener(), unbound));
                if (cancelled) {
                    listener.tell(new RdmaProtocol.Unbind());
                }
            } else if (event instanceof RdmaProtocol.ConnectionRequested r) {
                requested.add(new RdmaStreams.IncomingConnection(localAddress, r.remote(),
                        ByteString.fromArray(r.privateData()), streams.accept(r, options)));
                if (isAvailable(out)) {
                    push(out, requested.poll());
                }
            } else if (event instanceof RdmaProtocol.CommandFailed f) {
                RdmaStreams.ConnectionFailed failure = new RdmaStreams.ConnectionFailed("could not listen on " + bind,
                        f.cause());
                binding.completeExceptionally(failure);
                failStage(failure);
            } else if (event instanceof RdmaProtocol.Unbound) {
                unbound.complete(Done.getInstance());
                completeStage();
            }
        }

        @Override
        public void postStop() {
            binding.completeExceptionally(new RdmaStreams.ConnectionFailed("the listener on " + bind + " stopped", null));
            unbound.complete(Done.getInstance());
        }
    }
}
