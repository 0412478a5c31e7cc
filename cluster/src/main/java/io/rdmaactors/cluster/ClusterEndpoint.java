package io.rdmaactors.cluster;

import io.rdmaactors.actors.Rdma;
import io.rdmaactors.actors.RdmaProtocol;
import io.rdmaactors.actors.streams.RdmaStreams;
import io.rdmaactors.cluster.RdmaClusterProtocol.PeerConnected;
import io.rdmaactors.cluster.RdmaClusterProtocol.PeerDisconnected;
import io.rdmaactors.cluster.RdmaClusterProtocol.PeerEvent;
import io.rdmaactors.cluster.RdmaClusterProtocol.SendFailed;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.Set;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorRefResolver;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.cluster.ClusterEvent;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.UniqueAddress;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Subscribe;
import org.apache.pekko.util.ByteString;

/**
 * A member's RDMA endpoint: it listens on the member's RDMA address, says that address through
 * its {@link Beacon} (registered with the Receptionist under {@link RdmaCluster#ENDPOINTS} too),
 * and keeps one connection to every other member that is Up and reachable. It asks each member
 * Up for its RDMA address at its beacon's known path, until the incarnation Up now answers. Of
 * each pair, the member with the lower unique address dials; the other accepts, learning who
 * dials from the private data ({@link DialRequest}). Membership events are the authority: a member
 * unreachable loses its connection at once (Abort), a member removed after what is queued (Close),
 * and one reachable again is dialed again. Streams to a member ({@link PeerStreams}) are separate
 * connections to the same listener, failed by the same events.
 */
final class ClusterEndpoint extends AbstractBehavior<RdmaClusterProtocol.Command> {

    private record Bound(RdmaProtocol.ListenerEvent event) implements RdmaClusterProtocol.EndpointMessage {
    }

    private record MembershipChanged(ClusterEvent.MemberEvent event) implements RdmaClusterProtocol.EndpointMessage {
    }

    private record ReachabilityChanged(ClusterEvent.ReachabilityEvent event)
            implements RdmaClusterProtocol.EndpointMessage {
    }

    private record Redial() implements RdmaClusterProtocol.EndpointMessage {
    }

    /** Where the member's endpoint listens, for a stream to it. */
    record Locate(Address member, CompletableFuture<InetSocketAddress> at) implements RdmaClusterProtocol.EndpointMessage {
    }

    private record LocateExpired(Locate locate) implements RdmaClusterProtocol.EndpointMessage {
    }

    /** Asks again the members Up whose RDMA address is not known yet. */
    private record AskAgain() implements RdmaClusterProtocol.EndpointMessage {
    }

    private final RdmaCluster.Settings settings;
    private final TimerScheduler<RdmaClusterProtocol.Command> timers;
    private final UniqueAddress self;
    private final byte[] selfInPrivateData;
    private final Set<ActorRef<PeerEvent>> subscribers = new HashSet<>();
    /** Every member not removed, by the uid of its incarnation: how a dialer's request names it. */
    private final Map<Long, Address> members = new HashMap<>();
    /** Members Up, not yet leaving. */
    private final Map<Address, Member> up = new HashMap<>();
    private final Set<Address> unreachable = new HashSet<>();
    /** Each member's RDMA address, as the beacon of its incarnation Up now says. */
    private final Map<Address, InetSocketAddress> endpoints = new HashMap<>();
    private ActorRef<ByteString> beacon;
    /** The handler of each member's connection, dialing or up. */
    private final Map<Address, ActorRef<Object>> peers = new HashMap<>();
    private final Map<Address, ActorRef<RdmaProtocol.ConnectionCommand>> connections = new HashMap<>();
    private ActorRef<RdmaProtocol.ListenerCommand> listener;
    private final PeerStreams streams;
    /** Streams waiting for a member's RDMA address: it is Up, its beacon has not answered yet. */
    private final Map<Address, List<CompletableFuture<InetSocketAddress>>> locating = new HashMap<>();

    static Behavior<RdmaClusterProtocol.Command> create(RdmaCluster.Settings settings) {
        return Behaviors.setup(ctx -> Behaviors.withTimers(timers -> new ClusterEndpoint(ctx, timers, settings)));
    }

    private ClusterEndpoint(ActorContext<RdmaClusterProtocol.Command> ctx,
            TimerScheduler<RdmaClusterProtocol.Command> timers, RdmaCluster.Settings settings) {
        super(ctx);
        this.settings = settings;
        this.timers = timers;
        Cluster cluster = Cluster.get(ctx.getSystem());
        this.self = cluster.selfMember().uniqueAddress();
        this.selfInPrivateData = DialRequest.connection(self.longUid()).toBytes();
        this.streams = new PeerStreams(RdmaStreams.get(ctx.getSystem()), ctx.getSelf());
        String host = settings.hostname().isEmpty() ? self.address().getHost().orElse("127.0.0.1")
                : settings.hostname();
        Rdma.get(ctx.getSystem()).manager().tell(RdmaProtocol.Listen.on(new InetSocketAddress(host, settings.port()),
                ctx.messageAdapter(RdmaProtocol.ListenerEvent.class, Bound::new)));
        cluster.subscriptions().tell(Subscribe.create(
                ctx.messageAdapter(ClusterEvent.MemberEvent.class, MembershipChanged::new), ClusterEvent.MemberEvent.class));
        cluster.subscriptions().tell(Subscribe.create(
                ctx.messageAdapter(ClusterEvent.ReachabilityEvent.class, ReachabilityChanged::new),
                ClusterEvent.ReachabilityEvent.class));
    }

    @Override
    public Receive<RdmaClusterProtocol.Command> createReceive() {
        return newReceiveBuilder()
                .onMessage(RdmaClusterProtocol.Subscribe.class, s -> {
                    subscribers.add(s.subscriber());
                    getContext().watchWith(s.subscriber(), new RdmaClusterProtocol.Unsubscribe(s.subscriber()));
                    connections.forEach((member, c) -> s.subscriber().tell(new PeerConnected(member, c)));
                    return tellPeersSubscribers();
                })
                .onMessage(RdmaClusterProtocol.Unsubscribe.class, u -> {
                    subscribers.remove(u.subscriber());
                    return tellPeersSubscribers();
                })
                .onMessage(RdmaClusterProtocol.SendTo.class, this::sendTo)
                .onMessage(Bound.class, b -> onListener(b.event()))
                .onMessage(Beacon.Answer.class, this::onAnswer)
                .onMessage(AskAgain.class, a -> askBeacons())
                .onMessage(MembershipChanged.class, m -> onMember(m.event()))
                .onMessage(ReachabilityChanged.class, r -> onReachability(r.event()))
                .onMessage(Redial.class, r -> reconcile())
                .onMessage(PeerConnection.Up.class, this::onUp)
                .onMessage(PeerConnection.Down.class, this::onDown)
                .onMessage(PeerConnection.Failed.class, f -> publish(new SendFailed(f.member(), f.reason())))
                .onMessage(Locate.class, this::locate)
                .onMessage(LocateExpired.class, e -> onLocateExpired(e.locate()))
                .onMessage(PeerStreams.Bind.class, b -> {
                    streams.bind(b);
                    return this;
                })
                .onMessage(PeerStreams.Unbind.class, u -> {
                    streams.unbind(u);
                    return this;
                })
                .onMessage(PeerStreams.Opened.class, o -> {
                    streams.opened(o);
                    // not pipeToSelf: its callback on a future converted from Scala would start a thread per
                    // stream on two cores or fewer (RdmaCluster's callbacks)
                    var self = getContext().getSelf();
                    o.ended().whenCompleteAsync((done, failure) -> self.tell(new PeerStreams.Ended(o.member(),
                            o.stream())), getContext().getExecutionContext());
                    return this;
                })
                .onMessage(PeerStreams.Ended.class, e -> {
                    streams.ended(e);
                    return this;
                })
                .onSignal(PostStop.class, s -> {
                    streams.stop("the RDMA endpoint of " + self.address() + " stopped");
                    if (listener != null) {
                        listener.tell(new RdmaProtocol.Unbind());
                    }
                    return this;
                })
                .build();
    }

    private Behavior<RdmaClusterProtocol.Command> sendTo(RdmaClusterProtocol.SendTo s) {
        ActorRef<RdmaProtocol.ConnectionCommand> c = connections.get(s.member());
        if (c == null) {
            return publish(new SendFailed(s.member(), "no connection to " + s.member() + " now"));
        }
        c.tell(RdmaProtocol.Send.of(s.data(), null));
        return this;
    }

    private Behavior<RdmaClusterProtocol.Command> onListener(RdmaProtocol.ListenerEvent event) {
        if (event instanceof RdmaProtocol.Listening l) {
            listener = l.listener();
            InetSocketAddress at = l.localAddress();
            beacon = getContext().spawn(Beacon.create(getContext().getSelf(), self, at), Beacon.NAME);
            getContext().getSystem().receptionist().tell(Receptionist.register(RdmaCluster.ENDPOINTS, beacon));
            getContext().getLog().info("RDMA endpoint of {} listens on {}", self.address(), at);
            askBeacons();
        } else if (event instanceof RdmaProtocol.ConnectionRequested r) {
            accept(r);
        } else if (event instanceof RdmaProtocol.CommandFailed f && f.command() instanceof RdmaProtocol.Listen) {
            getContext().getLog().error("the RDMA endpoint of {} cannot listen: {}", self.address(), f.cause().getMessage());
        } else if (event instanceof RdmaProtocol.CommandFailed f) {
            // an accept or reject a dialer gave up on meanwhile (it timed out and dials again)
            getContext().getLog().debug("{} on the RDMA endpoint of {} failed: {}", f.command().getClass().getSimpleName(),
                    self.address(), f.cause().getMessage());
        }
        return this;
    }

    /**
     * A member dialed: for a stream, its channel's source takes it; for the pair's connection, its
     * handler replaces any earlier connection of that member (it restarted). A dialer this member
     * does not know yet is rejected, and dials again.
     */
    private void accept(RdmaProtocol.ConnectionRequested r) {
        Optional<DialRequest> request = DialRequest.parse(r.privateData());
        Address member = request.map(d -> members.get(d.uid())).orElse(null);
        if (member == null || unreachable.contains(member)
                || request.get().isStream() && !streams.offer(member, request.get().channel(), r)) {
            getContext().getLog().debug("{} rejects a dial from {}: {}", self.address(), member,
                    member == null ? "not a member it knows" : unreachable.contains(member) ? "unreachable"
                            : "no channel takes the stream");
            r.connection().tell(new RdmaProtocol.Reject(null));
            return;
        }
        if (request.get().isStream()) {
            return;
        }
        ActorRef<Object> earlier = peers.remove(member);
        if (earlier != null) {
            earlier.tell(new PeerConnection.End(true));
            if (connections.remove(member) != null) {
                publish(new PeerDisconnected(member, "replaced by a new connection from the member"));
            }
        }
        getContext().getLog().debug("{} accepts a dial from {}", self.address(), member);
        ActorRef<Object> peer = spawnPeer(PeerConnection.accepting(getContext().getSelf(), member), member);
        r.connection().tell(RdmaProtocol.Accept.with(peer.narrow()));
    }

    /**
     * Asks every member Up whose RDMA address is unknown, at its beacon's path, and again every
     * {@code redial-after} while one is: a member's beacon starts once it listens.
     */
    private Behavior<RdmaClusterProtocol.Command> askBeacons() {
        if (beacon == null) {
            return this; // asked once this member listens: answers come to its beacon
        }
        ActorRefResolver resolver = ActorRefResolver.get(getContext().getSystem());
        ByteString question = ByteString.fromString("? " + resolver.toSerializationFormat(beacon),
                StandardCharsets.UTF_8);
        boolean unknown = false;
        for (Address member : up.keySet()) {
            if (!endpoints.containsKey(member)) {
                unknown = true;
                resolver.<ByteString>resolveActorRef(member + "/system/" + RdmaCluster.ENDPOINT_NAME + "/"
                        + Beacon.NAME).tell(question);
            }
        }
        if (unknown && !timers.isTimerActive(AskAgain.class)) {
            timers.startSingleTimer(AskAgain.class, new AskAgain(), settings.redialAfter());
        }
        return this;
    }

    /**
     * Where {@code member}'s endpoint listens, for a stream to it: at once where it is Up and its
     * beacon answered, else once it is (within the connect timeout, as a member joining may have
     * dialed before it is Up); never for a member unknown or unreachable.
     */
    private Behavior<RdmaClusterProtocol.Command> locate(Locate l) {
        if (!members.containsValue(l.member()) || unreachable.contains(l.member())) {
            l.at().completeExceptionally(new RdmaStreams.ConnectionFailed("no member of the cluster reachable at "
                    + l.member(), null));
        } else if (up.containsKey(l.member()) && endpoints.containsKey(l.member())) {
            l.at().complete(endpoints.get(l.member()));
        } else {
            locating.computeIfAbsent(l.member(), m -> new ArrayList<>()).add(l.at());
            getContext().scheduleOnce(settings.connectTimeout(), getContext().getSelf(), new LocateExpired(l));
        }
        return this;
    }

    /** Completes the locates waiting for {@code member}: with its address, or (null) failed with {@code why}. */
    private void located(Address member, InetSocketAddress at, String why) {
        List<CompletableFuture<InetSocketAddress>> waiting = locating.remove(member);
        if (waiting != null) {
            for (CompletableFuture<InetSocketAddress> w : waiting) {
                if (at != null) {
                    w.complete(at);
                } else {
                    w.completeExceptionally(new RdmaStreams.ConnectionFailed(why, null));
                }
            }
        }
    }

    private Behavior<RdmaClusterProtocol.Command> onLocateExpired(Locate l) {
        List<CompletableFuture<InetSocketAddress>> waiting = locating.get(l.member());
        if (waiting != null && waiting.remove(l.at())) {
            l.at().completeExceptionally(new RdmaStreams.ConnectionFailed("the RDMA endpoint of " + l.member()
                    + " did not answer within " + settings.connectTimeout(), null));
            if (waiting.isEmpty()) {
                locating.remove(l.member());
            }
        }
        return this;
    }

    /** A beacon's answer counts from the incarnation Up now only. */
    private Behavior<RdmaClusterProtocol.Command> onAnswer(Beacon.Answer a) {
        Member m = up.get(a.address());
        if (m != null && m.uniqueAddress().longUid() == a.uid()) {
            endpoints.put(a.address(), a.rdma());
            located(a.address(), a.rdma(), null);
        }
        return reconcile();
    }

    private Behavior<RdmaClusterProtocol.Command> onMember(ClusterEvent.MemberEvent event) {
        Member m = event.member();
        if (m.uniqueAddress().equals(self)) {
            return this;
        }
        if (event instanceof ClusterEvent.MemberRemoved) {
            members.remove(m.uniqueAddress().longUid());
        } else {
            members.put(m.uniqueAddress().longUid(), m.address());
        }
        if (event instanceof ClusterEvent.MemberUp) {
            up.put(m.address(), m);
            endpoints.remove(m.address()); // an earlier incarnation's, if any
            askBeacons();
        } else if (event instanceof ClusterEvent.MemberRemoved) {
            up.remove(m.address());
            endpoints.remove(m.address());
            unreachable.remove(m.address());
            end(m.address(), false);
            String why = m.address() + " was removed from the cluster";
            streams.end(m.address(), why);
            located(m.address(), null, why);
        } else if (event instanceof ClusterEvent.MemberLeft || event instanceof ClusterEvent.MemberExited) {
            up.remove(m.address()); // no new dial; its connection ends when it is removed
        }
        return reconcile();
    }

    private Behavior<RdmaClusterProtocol.Command> onReachability(ClusterEvent.ReachabilityEvent event) {
        Address member = event.member().address();
        getContext().getLog().debug("{} sees {}", self.address(), event);
        if (event instanceof ClusterEvent.UnreachableMember) {
            unreachable.add(member);
            end(member, true);
            streams.end(member, member + " is unreachable");
            located(member, null, member + " is unreachable");
        } else if (event instanceof ClusterEvent.ReachableMember) {
            unreachable.remove(member);
        }
        return reconcile();
    }

    private void end(Address member, boolean abort) {
        ActorRef<Object> peer = peers.get(member);
        if (peer != null) {
            peer.tell(new PeerConnection.End(abort));
        }
    }

    /** Dials every member this side should dial and has no connection to. */
    private Behavior<RdmaClusterProtocol.Command> reconcile() {
        for (Member m : up.values()) {
            Address member = m.address();
            InetSocketAddress to = endpoints.get(member);
            if (to == null || unreachable.contains(member) || peers.containsKey(member)
                    || self.compareTo(m.uniqueAddress()) > 0) {
                continue;
            }
            getContext().getLog().debug("{} dials {} at {}", self.address(), member, to);
            spawnPeer(PeerConnection.dialing(getContext().getSelf(), member, to, selfInPrivateData,
                    settings.connectTimeout()), member);
        }
        return this;
    }

    private Behavior<RdmaClusterProtocol.Command> onUp(PeerConnection.Up u) {
        if (!u.peer().equals(peers.get(u.member()))) {
            getContext().getLog().debug("{}: a connection to {} came up after another replaced it", self.address(),
                    u.member());
            u.peer().tell(new PeerConnection.End(false)); // replaced meanwhile
            return this;
        }
        connections.put(u.member(), u.connection());
        return publish(new PeerConnected(u.member(), u.connection()));
    }

    private Behavior<RdmaClusterProtocol.Command> onDown(PeerConnection.Down d) {
        if (!d.peer().equals(peers.get(d.member()))) {
            return this; // a connection replaced earlier
        }
        peers.remove(d.member());
        connections.remove(d.member());
        if (d.connected()) {
            publish(new PeerDisconnected(d.member(), d.reason()));
        }
        // a member still Up and reachable is dialed again, after a pause
        timers.startSingleTimer(new Redial(), settings.redialAfter());
        return this;
    }

    /** The peers deliver what arrives to the subscribers themselves. */
    private Behavior<RdmaClusterProtocol.Command> tellPeersSubscribers() {
        PeerConnection.Subscribers now = new PeerConnection.Subscribers(Set.copyOf(subscribers));
        for (ActorRef<Object> peer : peers.values()) {
            peer.tell(now);
        }
        return this;
    }

    private ActorRef<Object> spawnPeer(Behavior<Object> behavior, Address member) {
        ActorRef<Object> peer = getContext().spawnAnonymous(behavior);
        peer.tell(new PeerConnection.Subscribers(Set.copyOf(subscribers)));
        peers.put(member, peer);
        return peer;
    }

    private Behavior<RdmaClusterProtocol.Command> publish(PeerEvent event) {
        getContext().getLog().debug("{} tells {} subscribers {}", self.address(), subscribers.size(), event);
        for (ActorRef<PeerEvent> s : subscribers) {
            s.tell(event);
        }
        return this;
    }
}
