package io.rdmaactors.actors;

import io.rdmaactors.actors.ConnectionProtocol.Async;
import io.rdmaactors.actors.ConnectionProtocol.Cm;
import io.rdmaactors.actors.ConnectionProtocol.Internal;
import io.rdmaactors.actors.ConnectionProtocol.QueuePairDrained;
import io.rdmaactors.actors.ConnectionProtocol.QueuePairFailed;
import io.rdmaactors.actors.ConnectionProtocol.QueuePairQuiesced;
import io.rdmaactors.actors.ConnectionProtocol.QueuePairReleased;
import io.rdmaactors.actors.ConnectionProtocol.QueuePairStarted;
import io.rdmaactors.actors.RdmaProtocol.CommandFailed;
import io.rdmaactors.actors.RdmaProtocol.ConnectFailure;
import io.rdmaactors.actors.RdmaProtocol.ConnectionCommand;
import io.rdmaactors.actors.RdmaProtocol.ConnectionEvent;
import io.rdmaactors.actors.RdmaProtocol.DisconnectReason;
import io.rdmaactors.cm.AddressVector;
import io.rdmaactors.cm.AsyncEvent;
import io.rdmaactors.cm.AsyncEventType;
import io.rdmaactors.cm.CmEvent;
import io.rdmaactors.verbs.Access;
import io.rdmaactors.verbs.CmId;
import io.rdmaactors.verbs.CompletionQueue;
import io.rdmaactors.verbs.ConnectionParameters;
import io.rdmaactors.verbs.Device;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.MemoryWindow;
import io.rdmaactors.verbs.MigrationState;
import io.rdmaactors.verbs.ProtectionDomain;
import io.rdmaactors.verbs.QpAttributes;
import io.rdmaactors.verbs.QpInitAttributes;
import io.rdmaactors.verbs.QueuePair;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.function.Function;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.Signal;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;

/**
 * Owns a connected CM id, as the connector that dialled out or the agent of an accepted request,
 * and drives it through its states: resolving, connecting (or awaiting the bind handler's decision,
 * then accepting), established, closing. It is never restarted: every way out ends in
 * {@link #closeWith}, which drains the QP so every outstanding command is answered, tells the
 * handler why, and stops. PostStop frees PD and id after the CQ and QP actors (its children) freed
 * theirs.
 */
final class ConnectionActor {

    private record TimedOut() implements Internal {
    }

    private record HandlerTerminated() implements Internal {
    }

    /**
     * Sent to itself twice on Accept, after the watch of the handler it names: the Terminated of a
     * handler dead already is a message to itself queued behind the first, so the second comes
     * after it, and no accept goes out for a dead handler.
     */
    private record AcceptNow(boolean watchSettled) implements Internal {
    }

    /**
     * A region exported to the peer, and the memory window its key names where the connection
     * shares its protection domain (null where the domain is the connection's own).
     */
    private record ExportedRegion(MemoryRegion region, MemoryWindow window) {
        int rkey() {
            return window != null ? window.rkey() : region.rkey();
        }

        void close() {
            if (window != null) {
                window.close(); // unbinds it: the region may then be deregistered
            }
            region.close();
        }
    }

    private record EstablishedEarly(InetSocketAddress remote, byte[] privateData) {
    }

    private static final Object TIMER = "timeout";
    /**
     * How long at most a closed connection answers the commands still sent to it while its handler
     * lives (a handler shared by many connections may live on): long enough for every command told
     * before the handler processed Disconnected, bounded so closed connections do not pile up.
     */
    private static final Duration CLOSED_LINGER = Duration.ofSeconds(10);
    /** The AddressError status of a host name that does not resolve (-EADDRNOTAVAIL, as rdma_cm reports). */
    static final int UNRESOLVED = -99;

    private final ActorContext<ConnectionCommand> ctx;
    private final TimerScheduler<ConnectionCommand> timers;
    private final CmId id;
    private final RdmaSettings settings;
    private final Devices devices;
    /**
     * The shared receive queue this connection receives from, the device's or its listener's, held
     * until its QP is destroyed; or null for receive buffers of its own.
     */
    private SharedReceiveBuffers receives;
    /** Its listener's shared receive queue: the connection keeps it, where it would leave the device's. */
    private boolean receivesFromListener;
    private ActorRef<ConnectionEvent> handler;
    /** An agent's listener handler: it hears refusals until Accept names the connection's handler. */
    private ActorRef<RdmaProtocol.ListenerEvent> bindHandler;
    /** The Accept that named the handler, answered to the bind handler if that handler dies before Connected. */
    private RdmaProtocol.Accept accepted;
    /** The handler a Register replaced: it hears the connection's end if the one it named dies. */
    private ActorRef<ConnectionEvent> replaced;
    /** The connection ends because its handler terminated. */
    private boolean handlerDied;
    /** The peer disconnected while the connection was open: whether it closed is known once drained. */
    private boolean peerDisconnected;
    /** Its own PD; null on a shared receive queue (whose PD it uses), and a connector's before its route. */
    private ProtectionDomain pd;
    /** Memory exported to the peer: deregistered after the QP is gone (its windows before it), before the PD. */
    private final List<ExportedRegion> exported = new ArrayList<>();
    private QueuePair qp;
    /** The QP's buffers, which its CQ actor frees with it. */
    private ConnectionBuffers buffers;
    private ActorRef<CompletionQueueActor.Command> cqActor;
    /** The QP actor: the handler's Connected names it, so data commands skip this actor. */
    private ActorRef<ConnectionCommand> qpActor;
    private final List<ConnectionCommand> beforeQueuePair = new ArrayList<>();
    /** Established before the QP actor started: Connected waits for it. */
    private EstablishedEarly connectedPending;
    private DisconnectReason closing;
    /** The handler heard how this connection ended (Disconnected or ConnectFailed). */
    private boolean told;
    /** The QP, memory, PD and id are freed: the connection only answers now. */
    private boolean released;
    /** An agent's listener: it counts the connection as open until it is released. */
    private ActorRef<RdmaProtocol.ListenerCommand> listener;
    /** The handler heard Connected. */
    private boolean connected;
    /** Quiescing because the system shuts down: the manager's stop tears the connection down after. */
    private boolean stopping;
    /** Who waits for this connection to end at the system's shutdown. */
    private ActorRef<CmEventActor.Command> shutdownWaiter;
    /** Where a connect goes: a ConnectFailed names it. */
    private InetSocketAddress remote;

    private ConnectionActor(ActorContext<ConnectionCommand> ctx, TimerScheduler<ConnectionCommand> timers, CmId id,
                            RdmaSettings settings, Devices devices) {
        this.ctx = ctx;
        this.timers = timers;
        this.id = id;
        this.settings = settings;
        this.devices = devices;
    }

    // ------------------------------------------------------------------ connector

    static Behavior<ConnectionCommand> connector(CmId id, RdmaProtocol.Connect connect, RdmaSettings settings,
                                                 Devices devices) {
        return Behaviors.setup(ctx -> Behaviors.withTimers(timers -> {
            ConnectionActor c = new ConnectionActor(ctx, timers, id, settings, devices);
            c.handler = connect.handler();
            c.remote = connect.remote();
            ctx.watchWith(connect.handler(), new HandlerTerminated());
            Duration timeout = connect.timeout().orElse(settings.connectTimeout());
            timers.startSingleTimer(TIMER, new TimedOut(), timeout);
            // stopping from setup runs no PostStop: the id is closed here
            if (connect.remote().isUnresolved()) {
                id.close();
                return c.connectFailed(connect.remote(), new RdmaProtocol.AddressError(UNRESOLVED));
            }
            try {
                id.resolveAddress(connect.local().orElse(null), connect.remote(), settings.resolveTimeout());
            } catch (RuntimeException e) {
                id.close();
                return c.connectFailed(connect.remote(), new RdmaProtocol.DeviceError(e));
            }
            return c.resolving(connect, timeout);
        }));
    }

    private Behavior<ConnectionCommand> resolving(RdmaProtocol.Connect connect, Duration timeout) {
        return state(m -> whileResolving(m, connect, timeout));
    }

    private Behavior<ConnectionCommand> whileResolving(ConnectionCommand m, RdmaProtocol.Connect connect,
                                                       Duration timeout) {
        InetSocketAddress remote = connect.remote();
        if (m instanceof Cm cm) {
            CmEvent e = cm.event();
            try {
                if (e instanceof CmEvent.AddrResolved) {
                    id.resolveRoute(settings.resolveTimeout());
                } else if (e instanceof CmEvent.RouteResolved) {
                    createQueuePair();
                    id.connect(ConnectionParameters.of(connect.privateData()));
                } else if (e instanceof CmEvent.Established est) {
                    timers.cancel(TIMER);
                    tellConnected(remote, est.privateData());
                    return established();
                } else {
                    ConnectFailure reason = failure(e);
                    if (reason != null) {
                        return connectFailed(remote, reason);
                    }
                }
            } catch (RuntimeException ex) {
                return connectFailed(remote, new RdmaProtocol.DeviceError(ex));
            }
            return Behaviors.same();
        }
        if (m instanceof TimedOut) {
            return connectFailed(remote, new RdmaProtocol.TimedOut(timeout));
        }
        if (m instanceof HandlerTerminated) {
            return Behaviors.stopped();
        }
        if (m instanceof Async) {
            return Behaviors.same();
        }
        Behavior<ConnectionCommand> resources = onResourceCommand(m);
        return resources != null ? resources : notConnected(m);
    }

    /** A connection's states: one method takes the messages, and a stop frees what it holds. */
    private Behavior<ConnectionCommand> state(Function<ConnectionCommand, Behavior<ConnectionCommand>> onMessage) {
        return Behaviors.receive((c, m) -> m instanceof ConnectionProtocol.CloseAtShutdown s ? onCloseAtShutdown(s)
                : onMessage.apply(m), this::onSignal);
    }

    /**
     * The system shuts down: an open connection quiesces as Close does, so what was sent arrives and
     * the peer has the closing notice before the manager's stop tears the connection down (and the
     * peer hears PeerClosed); one that is not open yet is stopped with the rest.
     */
    private Behavior<ConnectionCommand> onCloseAtShutdown(ConnectionProtocol.CloseAtShutdown s) {
        if (told || !connected) {
            s.replyTo().tell(new CmEventActor.ClosedAtShutdown(ctx.getSelf()));
            return Behaviors.same();
        }
        shutdownWaiter = s.replyTo();
        if (closing != null) {
            return Behaviors.same(); // closing already: the waiter hears when it ended
        }
        stopping = true;
        return quiescing(new RdmaProtocol.ErrorClosed(stopped()));
    }

    private void closedAtShutdown() {
        if (shutdownWaiter != null) {
            shutdownWaiter.tell(new CmEventActor.ClosedAtShutdown(ctx.getSelf()));
            shutdownWaiter = null;
        }
    }

    private static RdmaProtocol.ConnectionClosed stopped() {
        return new RdmaProtocol.ConnectionClosed("rdma-actors stopped");
    }

    private Behavior<ConnectionCommand> onSignal(ActorContext<ConnectionCommand> c, Signal signal) {
        return signal instanceof PostStop ? release() : Behaviors.unhandled();
    }

    /** Export, Unexport and the QP actor's start, taken alike in every state before closing; null for others. */
    private Behavior<ConnectionCommand> onResourceCommand(ConnectionCommand m) {
        if (m instanceof RdmaProtocol.Export e) {
            return onExport(e);
        }
        if (m instanceof RdmaProtocol.Unexport u) {
            return onUnexport(u);
        }
        if (m instanceof QueuePairStarted s) {
            return onQueuePairStarted(s);
        }
        return null;
    }

    private static ConnectFailure failure(CmEvent e) {
        if (e instanceof CmEvent.AddrError a) {
            return new RdmaProtocol.AddressError(a.status());
        }
        if (e instanceof CmEvent.RouteError r) {
            return new RdmaProtocol.RouteError(r.status());
        }
        if (e instanceof CmEvent.Rejected r) {
            return r.status() == CmEvent.Rejected.INVALID_SERVICE_ID ? new RdmaProtocol.NoListener()
                    : new RdmaProtocol.Rejected(r.status(), r.privateData());
        }
        if (e instanceof CmEvent.Unreachable u) {
            return new RdmaProtocol.Unreachable(u.status());
        }
        if (e instanceof CmEvent.ConnectError c) {
            return new RdmaProtocol.Unreachable(c.status());
        }
        if (e instanceof CmEvent.DeviceRemoval || e instanceof CmEvent.Disconnected) {
            return new RdmaProtocol.DeviceError(new IllegalStateException("connection lost while connecting: " + e));
        }
        return null;
    }

    private Behavior<ConnectionCommand> connectFailed(InetSocketAddress remote, ConnectFailure reason) {
        told = true;
        handler.tell(new RdmaProtocol.ConnectFailed(remote, reason));
        return Behaviors.stopped();
    }

    private Behavior<ConnectionCommand> notConnected(ConnectionCommand command) {
        if (handler != null && !(command instanceof Internal)) {
            RdmaProtocol.refuse(command, handler, new RdmaProtocol.ConnectionClosed("not connected yet"));
        }
        return Behaviors.same();
    }

    // ------------------------------------------------------------------ agent

    static Behavior<ConnectionCommand> agent(CmId id, byte[] privateData,
                                             ActorRef<RdmaProtocol.ListenerEvent> bindHandler,
                                             ActorRef<RdmaProtocol.ListenerCommand> listener, RdmaSettings settings,
                                             Devices devices, SharedReceiveBuffers listenerReceives) {
        return Behaviors.setup(ctx -> Behaviors.withTimers(timers -> {
            // first of all: the listener counts this connection as open until it is released
            listener.tell(new ListenerActor.Admitted(ctx.getSelf()));
            ConnectionActor c = new ConnectionActor(ctx, timers, id, settings, devices);
            c.listener = listener;
            c.bindHandler = bindHandler;
            if (listenerReceives != null) {
                if (!listenerReceives.retain()) {
                    ctx.getLog().debug("connection request from {} rejected: its listener stopped", id.remoteAddress());
                    c.rejectQuietly();
                    id.close();
                    return Behaviors.stopped();
                }
                c.receives = listenerReceives;
                c.receivesFromListener = true;
            } else {
                try {
                    c.takeReceives(id.device());
                } catch (RuntimeException e) {
                    ctx.getLog().warn("connection request from {} rejected: no protection domain", id.remoteAddress(), e);
                    c.rejectQuietly();
                    id.close();
                    return Behaviors.stopped();
                }
            }
            timers.startSingleTimer(TIMER, new TimedOut(), settings.acceptTimeout());
            bindHandler.tell(new RdmaProtocol.ConnectionRequested(id.remoteAddress(), privateData, ctx.getSelf()));
            return c.awaitingDecision(privateData);
        }));
    }

    private Behavior<ConnectionCommand> awaitingDecision(byte[] requestData) {
        return state(m -> whileAwaitingDecision(m, requestData));
    }

    private Behavior<ConnectionCommand> whileAwaitingDecision(ConnectionCommand m, byte[] requestData) {
        if (m instanceof RdmaProtocol.Accept a) {
            accepted = a;
            handler = a.handler();
            ctx.watchWith(handler, new HandlerTerminated());
            ctx.getSelf().tell(new AcceptNow(false));
            return accepting(requestData);
        }
        if (m instanceof RdmaProtocol.Reject r) {
            try {
                id.reject(r.privateData());
            } catch (RuntimeException e) {
                bindHandler.tell(new CommandFailed(r, e));
                rejectQuietly();
            }
            return Behaviors.stopped();
        }
        if (m instanceof TimedOut) {
            ctx.getLog().info("connection request from {} unanswered for {}: rejected", id.remoteAddress(),
                    settings.acceptTimeout());
            rejectQuietly();
            return Behaviors.stopped();
        }
        if (m instanceof Cm cm) {
            return isEnd(cm.event()) ? Behaviors.stopped() : Behaviors.same();
        }
        Behavior<ConnectionCommand> resources = onResourceCommand(m);
        if (resources != null) {
            return resources;
        }
        if (m instanceof Internal) {
            return Behaviors.same();
        }
        RdmaProtocol.refuse(m, bindHandler, new RdmaProtocol.ConnectionClosed("not accepted yet"));
        return Behaviors.same();
    }

    /** The CM events that end a connection in any state: the peer's disconnect, or the device's removal. */
    private static boolean isEnd(CmEvent e) {
        return e instanceof CmEvent.Disconnected || e instanceof CmEvent.DeviceRemoval;
    }

    private void rejectQuietly() {
        try {
            id.reject(new byte[0]);
        } catch (RuntimeException e) {
            ctx.getLog().debug("reject after failure", e);
        }
    }

    private Behavior<ConnectionCommand> accepting(byte[] requestData) {
        boolean[] sent = {false};
        return state(m -> whileAccepting(m, requestData, sent));
    }

    /** @param sent whether the accept went out: a handler dead before that leaves the client refused */
    private Behavior<ConnectionCommand> whileAccepting(ConnectionCommand m, byte[] requestData, boolean[] sent) {
        if (m instanceof AcceptNow n) {
            if (!n.watchSettled()) {
                ctx.getSelf().tell(new AcceptNow(true));
                return Behaviors.same();
            }
            try {
                createQueuePair();
                id.accept(ConnectionParameters.of(accepted.privateData()));
            } catch (RuntimeException e) {
                handler.tell(new CommandFailed(accepted, e));
                rejectQuietly();
                return Behaviors.stopped();
            }
            sent[0] = true;
            timers.startSingleTimer(TIMER, new TimedOut(), settings.acceptTimeout());
            return Behaviors.same();
        }
        if (m instanceof Cm cm) {
            if (cm.event() instanceof CmEvent.Established) {
                timers.cancel(TIMER);
                tellConnected(id.remoteAddress(), requestData);
                return established();
            }
            ConnectFailure reason = failure(cm.event());
            return reason == null ? Behaviors.same() : connectFailed(id.remoteAddress(), reason);
        }
        if (m instanceof TimedOut) {
            return connectFailed(id.remoteAddress(), new RdmaProtocol.TimedOut(settings.acceptTimeout()));
        }
        if (m instanceof RdmaProtocol.Accept a) {
            return refuseAnotherAccept(a);
        }
        if (m instanceof HandlerTerminated) {
            // nobody to tell Connected: the listener's handler, who sent the Accept, hears it
            told = true;
            bindHandler.tell(new CommandFailed(accepted, new RdmaProtocol.ConnectionClosed(
                    "the handler the Accept named, " + handler.path() + ", terminated before Connected")));
            if (!sent[0]) {
                rejectQuietly(); // dead before the accept went out: the client is refused
            }
            return Behaviors.stopped();
        }
        if (m instanceof Async) {
            return Behaviors.same();
        }
        Behavior<ConnectionCommand> resources = onResourceCommand(m);
        return resources != null ? resources : notConnected(m);
    }

    // ------------------------------------------------------------------ resources

    /**
     * The PD (or the SRQ's), a completion channel, a CQ and the QP for this id, and the actors that
     * own CQ and QP.
     */
    private void createQueuePair() {
        Device device = id.device();
        if (pd == null && receives == null) {
            takeReceives(device);
        }
        ProtectionDomain qpPd = protectionDomain();
        CompletionPoller poller = devices.poller(device);
        // on a shared receive queue every slot of it may hold a receive of this QP's, not yet polled
        CompletionQueue cq = device.createCompletionQueue(settings.sendQueueDepth()
                + (receives != null ? receives.slots : settings.receiveQueueDepth()), poller.channel());
        CompletionPoller.Subscription completions = poller.subscribe(cq);
        try {
            QpInitAttributes attributes = QpInitAttributes.rc(cq, settings.sendQueueDepth(),
                    settings.receiveQueueDepth());
            if (receives != null) {
                attributes = attributes.withSrq(receives.srq);
            }
            qp = id.createQueuePair(qpPd, attributes);
            buffers = ConnectionBuffers.prepare(qp, qpPd, settings, receives, !sharesDomain());
        } catch (RuntimeException e) {
            id.destroyQueuePair();
            qp = null;
            completions.close();
            throw e;
        }
        Behavior<ConnectionCommand> consumer = QueuePairActor.create(qp, buffers, handler, ctx.getSelf(), cq,
                completions, settings);
        cqActor = ctx.spawn(CompletionQueueActor.create(id, completions, buffers, consumer,
                settings.dataPath(handler), ctx.getSelf()), "cq",
                Props.empty().withDispatcherFromConfig(settings.verbsDispatcher()));
        ActorRef<DeviceActor.Command> deviceActor = devices.actor(device);
        if (deviceActor != null) {
            deviceActor.tell(new DeviceActor.RegisterQp(qp.qpNum(), ctx.getSelf()));
        }
    }

    /** The device's shared receive queue where the settings say so and it has one, else a domain of its own. */
    private void takeReceives(Device device) {
        SharedReceiveBuffers queue = settings.receivesFromDevice() ? devices.receiveQueue(device) : null;
        receives = queue != null && queue.retain() ? queue : null;
        if (receives == null) {
            pd = device.allocateProtectionDomain();
        }
    }

    private ProtectionDomain protectionDomain() {
        return receives != null ? receives.pd : pd;
    }

    /** Whether other connections share this one's domain: a shared receive queue's, a listener's or the device's. */
    private boolean sharesDomain() {
        return receives != null;
    }

    /**
     * Registers memory for the peer with exactly the rights asked (LOCAL_WRITE is implied by remote
     * writes). Where the domain is the connection's own, the region's key is the export's. Where
     * other connections share it (a shared receive queue's), a region's key would reach every one of
     * their peers, so the region is registered for local use and memory-window binding only, and the
     * export's key is a type 2 window bound to this connection's QP: answered once the bind
     * completed, which needs the connection established.
     */
    private Behavior<ConnectionCommand> onExport(RdmaProtocol.Export export) {
        if (qp == null && receives != null && !receivesFromListener) {
            // before Accept (a server handing the key over in its private data): a window could
            // only be bound once connected, after the key went; a domain of its own makes the
            // region's key usable at once, so this connection keeps queues of its own
            try {
                pd = id.device().allocateProtectionDomain();
                receives.release();
                receives = null;
            } catch (RuntimeException e) {
                export.replyTo().tell(new CommandFailed(export, e));
                return Behaviors.same();
            }
        }
        ProtectionDomain domain = protectionDomain();
        if (domain == null || (sharesDomain() && !connected)) {
            export.replyTo().tell(new CommandFailed(export, new RdmaProtocol.ConnectionClosed(domain == null
                    ? "not connected yet"
                    : "the connection from " + id.remoteAddress() + " is not established yet: on a shared"
                    + " receive queue an export is bound to the connected QP")));
            return Behaviors.same();
        }
        try {
            EnumSet<Access> rights = EnumSet.of(Access.LOCAL_WRITE);
            if (!sharesDomain()) {
                rights.addAll(export.access());
                MemoryRegion mr = domain.register(export.buffer(), rights);
                exported.add(new ExportedRegion(mr, null));
                export.replyTo().tell(new RdmaProtocol.Exported(new RemoteRegion(mr.address(), mr.length(), mr.rkey())));
                return Behaviors.same();
            }
            rights.add(Access.MW_BIND);
            MemoryRegion mr = domain.register(export.buffer(), rights);
            MemoryWindow mw;
            try {
                mw = domain.allocateMemoryWindow();
            } catch (RuntimeException e) {
                mr.close();
                throw e;
            }
            exported.add(new ExportedRegion(mr, mw));
            buffers.exportWindows.add(mw);
            toQueuePair(new ConnectionProtocol.BindWindow(export, mw, mr));
        } catch (RuntimeException e) {
            export.replyTo().tell(new CommandFailed(export, e));
        }
        return Behaviors.same();
    }

    /** Deregisters an exported region: its rkey stops working, for the peer's later accesses too. */
    private Behavior<ConnectionCommand> onUnexport(RdmaProtocol.Unexport unexport) {
        RemoteRegion region = unexport.region();
        ExportedRegion export = exported.stream()
                .filter(e -> e.rkey() == region.rkey() && e.region().address() == region.address())
                .findFirst().orElse(null);
        if (export == null) {
            unexport.replyTo().tell(new CommandFailed(unexport,
                    new IllegalArgumentException("this connection has not exported " + region)));
            return Behaviors.same();
        }
        exported.remove(export);
        if (export.window() != null) {
            buffers.exportWindows.remove(export.window());
        }
        export.close();
        unexport.replyTo().tell(new RdmaProtocol.Unexported(region));
        return Behaviors.same();
    }

    private Behavior<ConnectionCommand> onQueuePairStarted(QueuePairStarted s) {
        qpActor = s.qp();
        if (connectedPending != null) {
            tellConnected(connectedPending.remote(), connectedPending.privateData());
        }
        beforeQueuePair.forEach(qpActor::tell);
        beforeQueuePair.clear();
        return Behaviors.same();
    }

    /** Connected names the QP actor, so the handler's data commands go straight to it. */
    private void tellConnected(InetSocketAddress remote, byte[] privateData) {
        if (qpActor == null) {
            connectedPending = new EstablishedEarly(remote, privateData);
            return;
        }
        connectedPending = null;
        connected = true;
        handler.tell(new RdmaProtocol.Connected(qpActor, remote, id.localAddress(), privateData));
        qpActor.tell(new ConnectionProtocol.Open());
    }

    private void toQueuePair(ConnectionCommand command) {
        if (qpActor == null) {
            beforeQueuePair.add(command);
        } else {
            qpActor.tell(command);
        }
    }

    // ------------------------------------------------------------------ established

    /** An Accept after the one that named the handler, however far the connection got: the handler it names hears. */
    private Behavior<ConnectionCommand> refuseAnotherAccept(RdmaProtocol.Accept a) {
        a.handler().tell(new CommandFailed(a, new IllegalStateException(
                "the connection was accepted already, for " + handler.path())));
        return Behaviors.same();
    }

    private Behavior<ConnectionCommand> established() {
        return state(this::whileEstablished);
    }

    private Behavior<ConnectionCommand> whileEstablished(ConnectionCommand m) {
        if (m instanceof RdmaProtocol.DataCommand || m instanceof RdmaProtocol.Batch
                || m instanceof RdmaProtocol.ResumeWriting
                || m instanceof RdmaProtocol.SuspendReading || m instanceof RdmaProtocol.ResumeReading
                || m instanceof RdmaProtocol.RegisterMemory || m instanceof RdmaProtocol.DeregisterMemory) {
            return dataPath(m);
        }
        if (m instanceof RdmaProtocol.LoadAlternatePath p) {
            return onLoadAlternatePath(p);
        }
        if (m instanceof RdmaProtocol.Accept a && accepted != null) {
            return refuseAnotherAccept(a);
        }
        if (m instanceof RdmaProtocol.MigratePath p) {
            toQueuePair(new ConnectionProtocol.ModifyPath(p,
                    QpAttributes.of().migrationState(MigrationState.MIGRATED)));
            return Behaviors.same();
        }
        if (m instanceof RdmaProtocol.Close) {
            return quiescing(new RdmaProtocol.Closed());
        }
        if (m instanceof RdmaProtocol.ConfirmedClose) {
            return quiescing(new RdmaProtocol.ConfirmedClosed());
        }
        if (m instanceof Cm cm) {
            return onCmWhileOpen(cm.event());
        }
        Behavior<ConnectionCommand> common = onOpenCommand(m);
        if (common != null) {
            return common;
        }
        Behavior<ConnectionCommand> resources = onResourceCommand(m);
        if (resources != null) {
            return resources;
        }
        if (m instanceof Internal) {
            return Behaviors.same();
        }
        RdmaProtocol.refuse(m, handler, new IllegalStateException("the connection is established"));
        return Behaviors.same();
    }

    /**
     * What an open connection takes alike while established and quiescing: the QP's failure,
     * receives from a shared queue, Abort, the handler's death, Register and async events; null for others.
     */
    private Behavior<ConnectionCommand> onOpenCommand(ConnectionCommand m) {
        if (m instanceof QueuePairFailed f) {
            return closeWith(new RdmaProtocol.ErrorClosed(f.cause()));
        }
        if (m instanceof RdmaProtocol.Abort) {
            return closeWith(new RdmaProtocol.Aborted());
        }
        if (m instanceof HandlerTerminated) {
            return closeWith(handlerTerminated());
        }
        if (m instanceof RdmaProtocol.Register r) {
            return onRegister(r);
        }
        if (m instanceof Async a) {
            return onAsync(a.event());
        }
        return null;
    }

    private RdmaProtocol.ErrorClosed handlerTerminated() {
        handlerDied = true;
        return new RdmaProtocol.ErrorClosed(new RdmaProtocol.ConnectionClosed(replaced == null
                ? "the connection's handler terminated"
                : "the handler a Register named, " + handler.path() + ", terminated"));
    }

    /**
     * The QP actor took the new handler already; events from here go to it too, and its death ends
     * the connection, which the handler it replaced then hears as well.
     */
    private Behavior<ConnectionCommand> onRegister(RdmaProtocol.Register r) {
        ctx.unwatch(handler);
        replaced = handler;
        handler = r.handler();
        ctx.watchWith(handler, new HandlerTerminated());
        return Behaviors.same();
    }

    /** Data and flow commands sent here rather than to the QP actor Connected named. */
    private Behavior<ConnectionCommand> dataPath(ConnectionCommand command) {
        toQueuePair(command);
        return Behaviors.same();
    }

    private Behavior<ConnectionCommand> onLoadAlternatePath(RdmaProtocol.LoadAlternatePath m) {
        // RoCE forms GID 0 from the port's IPv4 address; rdma_cm resolves an IB alternate path the same way
        byte[] gid = AddressVector.ipv4MappedGid(m.alternateRemote().getAddress());
        toQueuePair(new ConnectionProtocol.ModifyPath(m, QpAttributes.of()
                .alternatePath(AddressVector.global(gid, m.port())).alternatePortNum(m.port())
                .migrationState(MigrationState.REARM)));
        return Behaviors.same();
    }

    private Behavior<ConnectionCommand> onCmWhileOpen(CmEvent e) {
        if (e instanceof CmEvent.Disconnected) {
            disconnectQuietly();
            peerDisconnected = true;
            return closeWith(peerEnded(false));
        }
        if (e instanceof CmEvent.DeviceRemoval) {
            return closeWith(new RdmaProtocol.ErrorClosed(new RdmaProtocol.DeviceLost(id.device().name(),
                    "was removed")));
        }
        return Behaviors.same();
    }

    /** A peer that disconnected without its closing notice, as a dead process does, failed. */
    private static DisconnectReason peerEnded(boolean closing) {
        return closing ? new RdmaProtocol.PeerClosed() : new RdmaProtocol.ErrorClosed(new RdmaProtocol.PeerFailed(
                "the peer disconnected without closing: it aborted, its handler, process or rdma-actors stopped,"
                        + " or the path to it failed"));
    }

    private Behavior<ConnectionCommand> onAsync(AsyncEvent e) {
        if (e.type() == AsyncEventType.PATH_MIG) {
            handler.tell(new RdmaProtocol.PathMigrated());
            return Behaviors.same();
        }
        if (e.type() == AsyncEventType.PATH_MIG_ERR) {
            ctx.getLog().warn("path migration of {} failed", id.remoteAddress());
            return Behaviors.same();
        }
        if (e.type() == AsyncEventType.DEVICE_FATAL) {
            disconnectQuietly();
            return closeWith(new RdmaProtocol.ErrorClosed(new RdmaProtocol.DeviceLost(id.device().name(),
                    "failed (DEVICE_FATAL)")));
        }
        if (e.type() == AsyncEventType.QP_FATAL || e.type() == AsyncEventType.QP_REQ_ERR
                || e.type() == AsyncEventType.QP_ACCESS_ERR) {
            disconnectQuietly();
            return closeWith(new RdmaProtocol.ErrorClosed(new IllegalStateException(e.type() + " on the connection")));
        }
        return Behaviors.same();
    }

    // ------------------------------------------------------------------ closing

    /**
     * Close or ConfirmedClose: what the handler sent before completes first (the connection still
     * receives meanwhile), then the disconnect. A QP that never quiesces is disconnected after the
     * connect timeout anyway.
     */
    private Behavior<ConnectionCommand> quiescing(DisconnectReason reason) {
        closing = reason;
        toQueuePair(new ConnectionProtocol.Quiesce());
        timers.startSingleTimer(TIMER, new TimedOut(), settings.connectTimeout());
        return state(m -> whileQuiescing(m, reason));
    }

    private Behavior<ConnectionCommand> whileQuiescing(ConnectionCommand m, DisconnectReason reason) {
        if ((m instanceof QueuePairQuiesced || m instanceof TimedOut) && stopping) {
            // the peer has the closing notice: the manager's stop tears the connection down
            timers.cancel(TIMER);
            closedAtShutdown();
            return Behaviors.same();
        }
        if (m instanceof QueuePairQuiesced || m instanceof TimedOut) {
            return disconnecting();
        }
        if (m instanceof Cm cm) {
            return isEnd(cm.event()) ? closeWith(reason) : Behaviors.same();
        }
        Behavior<ConnectionCommand> common = onOpenCommand(m);
        if (common != null) {
            return common;
        }
        return whileClosing(m);
    }

    /** What every closing state takes alike: the QP actor's start, internal messages, and commands refused. */
    private Behavior<ConnectionCommand> whileClosing(ConnectionCommand m) {
        if (m instanceof QueuePairStarted s) {
            return onQueuePairStarted(s);
        }
        if (m instanceof Internal) {
            return Behaviors.same();
        }
        return refuseWhileClosing(m);
    }

    /** Quiesced: Close ends now; ConfirmedClose waits for the peer's answer (or the CM timeout). */
    private Behavior<ConnectionCommand> disconnecting() {
        if (closing instanceof RdmaProtocol.Closed) {
            return closeWith(closing);
        }
        disconnectQuietly();
        timers.startSingleTimer(TIMER, new TimedOut(), settings.connectTimeout());
        return confirming();
    }

    /** Disconnect sent: wait for the peer's answer (or the CM timeout), then drain. */
    private Behavior<ConnectionCommand> confirming() {
        return state(this::whileConfirming);
    }

    private Behavior<ConnectionCommand> whileConfirming(ConnectionCommand m) {
        if (m instanceof Cm cm) {
            return isEnd(cm.event()) ? closeWith(closing) : Behaviors.same();
        }
        if (m instanceof TimedOut || m instanceof HandlerTerminated) {
            return closeWith(closing);
        }
        if (m instanceof RdmaProtocol.Abort) {
            return closeWith(new RdmaProtocol.Aborted());
        }
        if (m instanceof RdmaProtocol.Register r) {
            return onRegister(r);
        }
        return whileClosing(m);
    }

    /**
     * The one way out of an open connection: drain every outstanding request, free the QP and
     * everything under it, tell the handler, and answer what still comes. An error completion found
     * by the drain decides the reason, so a connection whose own request failed ends as
     * ErrorClosed however the peer's disconnect raced it.
     */
    private Behavior<ConnectionCommand> closeWith(DisconnectReason reason) {
        timers.cancel(TIMER);
        closing = reason;
        disconnectQuietly();
        if (cqActor == null) {
            tellDisconnected(reason);
            return Behaviors.stopped();
        }
        toQueuePair(new ConnectionProtocol.Drain());
        return state(this::whileDraining);
    }

    private Behavior<ConnectionCommand> whileDraining(ConnectionCommand m) {
        if (m instanceof QueuePairDrained d) {
            DisconnectReason ended = peerDisconnected ? peerEnded(d.peerClosing()) : closing;
            boolean ownError = closing instanceof RdmaProtocol.ErrorClosed && !peerDisconnected;
            closing = d.failure() != null && !ownError ? new RdmaProtocol.ErrorClosed(d.failure()) : ended;
            cqActor.tell(new CompletionQueueActor.Release(ctx.getSelf()));
            return Behaviors.same();
        }
        if (m instanceof QueuePairReleased) {
            freeResources();
            tellDisconnected(closing);
            return handlerDied ? Behaviors.stopped() : closed(handler, qpActor, timers);
        }
        if (m instanceof RdmaProtocol.Register r) {
            return onRegister(r);
        }
        return whileClosing(m);
    }

    /**
     * A connection that told Disconnected, its resources freed: what still comes (commands the
     * handler sent before it processed Disconnected) is answered at once, until the handler stops
     * or {@link #CLOSED_LINGER} has passed; then commands are answered from their dead letters. It
     * holds nothing of the connection it was but the two references it answers for.
     */
    private static Behavior<ConnectionCommand> closed(ActorRef<ConnectionEvent> handler,
                                                      ActorRef<ConnectionCommand> qpActor,
                                                      TimerScheduler<ConnectionCommand> timers) {
        timers.startSingleTimer(TIMER, new TimedOut(), CLOSED_LINGER);
        return Behaviors.setup(ctx -> ClosedConnections.refusing(Behaviors.receive(ConnectionCommand.class)
                        .onMessage(ConnectionProtocol.CloseAtShutdown.class, s -> {
                            s.replyTo().tell(new CmEventActor.ClosedAtShutdown(ctx.getSelf()));
                            return Behaviors.same();
                        })
                        .onMessage(TimedOut.class, t -> Behaviors.stopped())
                        .onMessage(HandlerTerminated.class, t -> Behaviors.stopped()), handler)
                .onSignal(PostStop.class, s -> {
                    new ClosedConnections.Stopped(List.of(ctx.getSelf(), qpActor), handler.narrow())
                            .publish(ctx.getSystem());
                    return Behaviors.same();
                })
                .build());
    }

    private Behavior<ConnectionCommand> refuseWhileClosing(ConnectionCommand command) {
        RdmaProtocol.refuse(command, handler, new RdmaProtocol.ConnectionClosed("the connection is closing"));
        return Behaviors.same();
    }

    /** rdma_disconnect moves the QP to ERR and flushes it; after the peer has gone it may fail, harmlessly. */
    private void disconnectQuietly() {
        try {
            id.disconnect();
        } catch (RuntimeException e) {
            ctx.getLog().debug("disconnect", e);
        }
    }

    private void tellDisconnected(DisconnectReason reason) {
        if (!told) {
            told = true;
            handler.tell(new RdmaProtocol.Disconnected(reason));
            Rdma.get(ctx.getSystem()).toldAtShutdown(handler);
            if (replaced != null && replaced != handler && handlerDied) {
                replaced.tell(new RdmaProtocol.Disconnected(reason));
            }
            closedAtShutdown();
        }
    }

    /**
     * PostStop before the connection was closed: the CQ and QP actors (children) already freed
     * theirs and failed what was outstanding; free the rest. A connection stopped from outside (its
     * parent restarting or the system shutting down) still tells its handler.
     */
    private Behavior<ConnectionCommand> release() {
        RdmaProtocol.ConnectionClosed stopped = stopped();
        if (connected) {
            tellDisconnected(new RdmaProtocol.ErrorClosed(stopped));
        } else if (handler != null && !told) {
            // a connect or accept cut short (the manager restarting): it fails, it never was connected
            connectFailed(remote != null ? remote : id.remoteAddress(), new RdmaProtocol.DeviceError(stopped));
            Rdma.get(ctx.getSystem()).toldAtShutdown(handler);
        }
        ActorRef<CommandFailed> answers = handler != null ? handler.narrow()
                : bindHandler != null ? bindHandler.narrow() : null;
        if (answers != null) {
            List<ActorRef<?>> actors = qpActor == null ? List.of(ctx.getSelf()) : List.of(ctx.getSelf(), qpActor);
            new ClosedConnections.Stopped(actors, answers).publish(ctx.getSystem());
        }
        freeResources();
        return Behaviors.same();
    }

    /** Frees what the connection holds after its QP (gone with the CQ actor's release or stop): memory, PD, id. */
    private void freeResources() {
        if (released) {
            return;
        }
        released = true;
        if (qp != null) {
            ActorRef<DeviceActor.Command> deviceActor = devices.actor(id.device());
            if (deviceActor != null) {
                deviceActor.tell(new DeviceActor.UnregisterQp(qp.qpNum()));
            }
            id.destroyQueuePair();
        }
        if (receives != null) {
            receives.release(); // after the QP: a shared receive queue outlives every QP attached to it
        }
        exported.forEach(ExportedRegion::close);
        if (pd != null) {
            pd.close();
        }
        id.close();
        if (listener != null) {
            listener.tell(new ListenerActor.Released(ctx.getSelf()));
        }
    }
}
