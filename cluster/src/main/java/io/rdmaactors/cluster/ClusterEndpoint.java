package io.rdmaactors.cluster;

import io.rdmaactors.actors.Rdma;
import io.rdmaactors.actors.RdmaProtocol;
import io.rdmaactors.cluster.RdmaClusterProtocol.PeerConnected;
import io.rdmaactors.cluster.RdmaClusterProtocol.PeerDisconnected;
import io.rdmaactors.cluster.RdmaClusterProtocol.PeerEvent;
import io.rdmaactors.cluster.RdmaClusterProtocol.SendFailed;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.AddressFromURIString;
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
 * dials from the private data. Membership events are the authority: a member unreachable loses
 * its connection at once (Abort), a member removed after what is queued (Close), and one
 * reachable again is dialed again.
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

    /** Asks again the members Up whose RDMA address is not known yet. */
    private record AskAgain() implements RdmaClusterProtocol.EndpointMessage {
    }

    private final RdmaCluster.Settings settings;
    private final TimerScheduler<RdmaClusterProtocol.Command> timers;
    private final UniqueAddress self;
    private final byte[] selfInPrivateData;
    private final Set<ActorRef<PeerEvent>> subscribers = new HashSet<>();
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
        this.selfInPrivateData = self.address().toString().getBytes(StandardCharsets.UTF_8);
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
                .onSignal(PostStop.class, s -> {
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
        } else if (event instanceof RdmaProtocol.CommandFailed f) {
            getContext().getLog().error("the RDMA endpoint of {} cannot listen: {}", self.address(), f.cause().getMessage());
        }
        return this;
    }

    /** A member dialed: its handler replaces any earlier connection of that member (it restarted). */
    private void accept(RdmaProtocol.ConnectionRequested r) {
        Address member;
        try {
            member = AddressFromURIString.parse(new String(r.privateData(), StandardCharsets.UTF_8));
        } catch (RuntimeException e) {
            r.connection().tell(new RdmaProtocol.Reject(null));
            return;
        }
        if (unreachable.contains(member)) {
            r.connection().tell(new RdmaProtocol.Reject(null));
            return;
        }
        ActorRef<Object> earlier = peers.remove(member);
        if (earlier != null) {
            earlier.tell(new PeerConnection.End(true));
            if (connections.remove(member) != null) {
                publish(new PeerDisconnected(member, "replaced by a new connection from the member"));
            }
        }
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

    /** A beacon's answer counts from the incarnation Up now only. */
    private Behavior<RdmaClusterProtocol.Command> onAnswer(Beacon.Answer a) {
        Member m = up.get(a.address());
        if (m != null && m.uniqueAddress().longUid() == a.uid()) {
            endpoints.put(a.address(), a.rdma());
        }
        return reconcile();
    }

    private Behavior<RdmaClusterProtocol.Command> onMember(ClusterEvent.MemberEvent event) {
        Member m = event.member();
        if (m.uniqueAddress().equals(self)) {
            return this;
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
        } else if (event instanceof ClusterEvent.MemberLeft || event instanceof ClusterEvent.MemberExited) {
            up.remove(m.address()); // no new dial; its connection ends when it is removed
        }
        return reconcile();
    }

    private Behavior<RdmaClusterProtocol.Command> onReachability(ClusterEvent.ReachabilityEvent event) {
        Address member = event.member().address();
        if (event instanceof ClusterEvent.UnreachableMember) {
            unreachable.add(member);
            end(member, true);
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
            spawnPeer(PeerConnection.dialing(getContext().getSelf(), member, to, selfInPrivateData,
                    settings.connectTimeout()), member);
        }
        return this;
    }

    private Behavior<RdmaClusterProtocol.Command> onUp(PeerConnection.Up u) {
        if (!u.peer().equals(peers.get(u.member()))) {
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
        for (ActorRef<PeerEvent> s : subscribers) {
            s.tell(event);
        }
        return this;
    }
}
