package io.rdmaactors.actors;

import io.rdmaactors.actors.RdmaProtocol.CommandFailed;
import io.rdmaactors.actors.RdmaProtocol.ConnectionClosed;
import io.rdmaactors.actors.RdmaProtocol.ConnectionEvent;
import io.rdmaactors.actors.RdmaProtocol.DataCommand;
import io.rdmaactors.verbs.CmId;
import io.rdmaactors.verbs.CompletionChannel;
import io.rdmaactors.verbs.CompletionQueue;
import io.rdmaactors.verbs.InvalidStateException;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.MigrationState;
import io.rdmaactors.verbs.ProtectionDomain;
import io.rdmaactors.verbs.QpAttributes;
import io.rdmaactors.verbs.QueueFullException;
import io.rdmaactors.verbs.QueuePair;
import io.rdmaactors.verbs.ReceiveWorkRequest;
import io.rdmaactors.verbs.SendWorkRequest;
import io.rdmaactors.verbs.WcOpcode;
import io.rdmaactors.verbs.WcStatus;
import io.rdmaactors.verbs.WorkCompletion;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;

/**
 * Owns a connection's QP and its registered buffers, and consumes its CQ (waiting on the
 * completion channel through a {@link CompletionNotifier}). It posts every data command into a send slot,
 * never more than the send queue holds (a full queue refuses with WritingSuspended until half of it
 * is free again), keeps receives posted, and answers every command exactly once: on its completion,
 * on its flush, or when the connection closes first.
 */
final class QueuePairActor extends AbstractBehavior<QueuePairActor.Command> {

    interface Command {
    }

    record Execute(DataCommand command) implements Command {
    }

    record SetReading(boolean suspended) implements Command {
    }

    /** The handler asks to hear WritingResumed once there is room. */
    record ResumeWriting() implements Command {
    }

    /** The handler was told Connected: receives may be delivered from now on. */
    record Open() implements Command {
    }

    record ModifyPath(Object command, QpAttributes attributes) implements Command {
    }

    /** The connection is closing: poll what is left, fail what is still outstanding, report back. */
    record Drain() implements Command {
    }

    private record Notified() implements Command {
    }

    private record ChannelFailed(Throwable cause) implements Command {
    }

    /** wr_id bit that marks a receive; the low bits are the buffer slot. */
    private static final long RECEIVE = 1L << 62;

    /** The registered send and receive buffers, one slot per queue entry. */
    static final class Buffers {
        final MemoryRegion send;
        final MemoryRegion receive;
        final int slotSize;
        final int sendSlots;
        final int receiveSlots;

        private Buffers(ProtectionDomain pd, RdmaSettings settings, boolean ownReceives) {
            this.slotSize = settings.bufferSize();
            this.sendSlots = settings.sendQueueDepth();
            this.receiveSlots = ownReceives ? settings.receiveQueueDepth() : 0;
            this.send = pd.register(ByteBuffer.allocateDirect(sendSlots * slotSize));
            this.receive = ownReceives ? pd.register(ByteBuffer.allocateDirect(receiveSlots * slotSize)) : null;
        }

        void close() {
            send.close();
            if (receive != null) {
                receive.close();
            }
        }
    }

    /**
     * Registers the buffers and posts every receive before the connection can carry a message;
     * a QP on a shared receive queue has no receives of its own.
     */
    static Buffers prepare(QueuePair qp, ProtectionDomain pd, RdmaSettings settings, boolean ownReceives) {
        Buffers buffers = new Buffers(pd, settings, ownReceives);
        try {
            for (int slot = 0; slot < buffers.receiveSlots; slot++) {
                qp.postReceive(receiveRequest(buffers, slot));
            }
        } catch (RuntimeException e) {
            buffers.close();
            throw e;
        }
        return buffers;
    }

    private static ReceiveWorkRequest receiveRequest(Buffers b, int slot) {
        return ReceiveWorkRequest.of(RECEIVE | slot, b.receive.sge(slot * b.slotSize, b.slotSize));
    }

    private record Held(int slot, int length, Integer immediate) {
    }

    private final CmId id;
    private final QueuePair qp;
    /** The connection's CQ: this actor is its only consumer; the parent CQ actor owns it. */
    private final CompletionQueue cq;
    private final CompletionNotifier notifier;
    private final WorkCompletion[] batch = new WorkCompletion[32];
    private final ProtectionDomain pd;
    private final Buffers buffers;
    private final ActorRef<ConnectionEvent> handler;
    private final ActorRef<RdmaProtocol.ConnectionCommand> connection;
    private final DataCommand[] outstanding;
    private final ArrayDeque<Integer> freeSlots = new ArrayDeque<>();
    private final ArrayDeque<Held> held = new ArrayDeque<>();
    private final ByteBuffer sendMemory;
    private final ByteBuffer receiveMemory;
    private boolean writingSuspended;
    /** The handler sent ResumeWriting: resume once half the send queue is free. */
    private boolean resumeRequested;
    private boolean readingSuspended;
    /** Until the handler has Connected, receives wait: the peer may send before this side is established. */
    private boolean open;
    private boolean closed;

    static Behavior<Command> create(CmId id, QueuePair qp, ProtectionDomain pd, Buffers buffers,
                                    ActorRef<ConnectionEvent> handler,
                                    ActorRef<RdmaProtocol.ConnectionCommand> connection, CompletionQueue cq,
                                    CompletionChannel channel) {
        return Behaviors.setup(ctx -> new QueuePairActor(ctx, id, qp, pd, buffers, handler, connection, cq, channel));
    }

    private QueuePairActor(ActorContext<Command> ctx, CmId id, QueuePair qp, ProtectionDomain pd, Buffers buffers,
                           ActorRef<ConnectionEvent> handler, ActorRef<RdmaProtocol.ConnectionCommand> connection,
                           CompletionQueue cq, CompletionChannel channel) {
        super(ctx);
        this.cq = cq;
        this.id = id;
        this.qp = qp;
        this.pd = pd;
        this.buffers = buffers;
        this.handler = handler;
        this.connection = connection;
        this.outstanding = new DataCommand[buffers.sendSlots];
        for (int i = 0; i < buffers.sendSlots; i++) {
            freeSlots.add(i);
        }
        this.sendMemory = buffers.send.buffer().order(ByteOrder.nativeOrder());
        this.receiveMemory = buffers.receive == null ? null : buffers.receive.buffer();
        this.notifier = new CompletionNotifier("rdma-cq-" + cq.handle(), cq, channel, ctx.getSelf(), new Notified(),
                ChannelFailed::new);
        pollAll();
    }

    @Override
    public Receive<Command> createReceive() {
        return newReceiveBuilder()
                .onMessage(Execute.class, e -> execute(e.command()))
                .onMessage(Notified.class, n -> {
                    notifier.rearm();
                    pollAll();
                    return this;
                })
                .onMessage(ChannelFailed.class, f -> {
                    throw new IllegalStateException("the completion channel failed", f.cause());
                })
                .onMessage(SetReading.class, this::onSetReading)
                .onMessage(ResumeWriting.class, r -> {
                    resumeRequested = true;
                    resumeWhenRoom();
                    return this;
                })
                .onMessage(Open.class, o -> {
                    open = true;
                    deliverHeld();
                    return this;
                })
                .onMessage(ModifyPath.class, this::onModifyPath)
                .onMessage(Drain.class, d -> {
                    pollAll();
                    failOutstanding("the connection closed");
                    closed = true;
                    connection.tell(new ConnectionActor.QueuePairDrained());
                    return this;
                })
                .onSignal(PostStop.class, s -> {
                    notifier.close();
                    failOutstanding("the connection stopped");
                    id.destroyQueuePair();
                    buffers.close();
                    return this;
                })
                .build();
    }

    private Behavior<Command> execute(DataCommand command) {
        if (closed) {
            handler.tell(new CommandFailed(command, new ConnectionClosed("the connection is closing")));
            return this;
        }
        // until the handler's ResumeWriting is answered everything is refused, so a resent stream keeps its order
        Integer slot = writingSuspended ? null : freeSlots.poll();
        if (slot == null) {
            handler.tell(new CommandFailed(command, new QueueFullException("ibv_post_send",
                    "the send queue holds " + buffers.sendSlots + " requests")));
            if (!writingSuspended) {
                writingSuspended = true;
                handler.tell(new RdmaProtocol.WritingSuspended());
            }
            return this;
        }
        try {
            qp.postSend(request(command, slot));
            outstanding[slot] = command;
        } catch (RuntimeException e) {
            freeSlots.addFirst(slot);
            handler.tell(new CommandFailed(command, e));
        }
        return this;
    }

    private SendWorkRequest request(DataCommand command, int slot) {
        int base = slot * buffers.slotSize;
        if (command instanceof RdmaProtocol.Send s) {
            copyIn(base, s.data());
            return s.immediate() == null ? SendWorkRequest.send(slot, sge(base, s.data().length))
                    : SendWorkRequest.sendWithImmediate(slot, s.immediate(), sge(base, s.data().length));
        }
        if (command instanceof RdmaProtocol.Write w) {
            copyIn(base, w.data());
            long remote = w.target().at(w.offset(), w.data().length);
            return w.immediate() == null ? SendWorkRequest.write(slot, remote, w.target().rkey(), sge(base, w.data().length))
                    : SendWorkRequest.writeWithImmediate(slot, w.immediate(), remote, w.target().rkey(),
                            sge(base, w.data().length));
        }
        if (command instanceof RdmaProtocol.Read r) {
            checkFits(r.length());
            return SendWorkRequest.read(slot, r.source().at(r.offset(), r.length()), r.source().rkey(),
                    sge(base, r.length()));
        }
        if (command instanceof RdmaProtocol.FetchAdd f) {
            return SendWorkRequest.fetchAdd(slot, f.target().at(f.offset(), 8), f.target().rkey(), f.add(), sge(base, 8));
        }
        RdmaProtocol.CompareSwap c = (RdmaProtocol.CompareSwap) command;
        return SendWorkRequest.compareSwap(slot, c.target().at(c.offset(), 8), c.target().rkey(), c.expected(),
                c.swap(), sge(base, 8));
    }

    private io.rdmaactors.verbs.ScatterGatherElement sge(int offset, int length) {
        return buffers.send.sge(offset, length);
    }

    private void copyIn(int base, byte[] data) {
        checkFits(data.length);
        sendMemory.put(base, data);
    }

    private void checkFits(int length) {
        if (length > buffers.slotSize) {
            throw new IllegalArgumentException(length + " bytes exceed the buffer size of " + buffers.slotSize
                    + " (rdma-actors.buffer-size)");
        }
    }

    private void pollAll() {
        int n;
        while ((n = cq.poll(batch)) > 0) {
            for (int i = 0; i < n; i++) {
                WorkCompletion wc = batch[i];
                if ((wc.wrId() & RECEIVE) != 0) {
                    onReceive(wc);
                } else {
                    onSendCompletion(wc);
                }
            }
        }
        resumeWhenRoom();
    }

    private void resumeWhenRoom() {
        if (writingSuspended && resumeRequested && freeSlots.size() >= (buffers.sendSlots + 1) / 2) {
            writingSuspended = false;
            resumeRequested = false;
            handler.tell(new RdmaProtocol.WritingResumed());
        }
    }

    private void onSendCompletion(WorkCompletion wc) {
        int slot = (int) wc.wrId();
        DataCommand command = outstanding[slot];
        if (command == null) {
            return; // already answered when the connection closed
        }
        outstanding[slot] = null;
        freeSlots.add(slot);
        if (!wc.isSuccess()) {
            RdmaProtocol.WorkRequestFailed failure = new RdmaProtocol.WorkRequestFailed(wc.status());
            handler.tell(new CommandFailed(command, failure));
            if (wc.status() != WcStatus.WR_FLUSH_ERR) {
                // an error completion leaves the QP in ERR: the connection cannot carry anything more
                connection.tell(new ConnectionActor.QueuePairFailed(failure));
            }
            return;
        }
        int base = slot * buffers.slotSize;
        if (command instanceof RdmaProtocol.Read) {
            byte[] data = new byte[wc.byteLen()];
            sendMemory.get(base, data);
            handler.tell(new RdmaProtocol.ReadCompleted(command.ack(), data));
        } else if (command instanceof RdmaProtocol.FetchAdd || command instanceof RdmaProtocol.CompareSwap) {
            handler.tell(new RdmaProtocol.AtomicCompleted(command.ack(), sendMemory.getLong(base)));
        } else if (command.ack() != null) {
            handler.tell(new RdmaProtocol.Acked(command.ack()));
        }
    }

    private void onReceive(WorkCompletion wc) {
        if (!wc.isSuccess()) {
            return; // flushed: the connection is going away
        }
        // a write with immediate put its data in exported memory: the receive carries only the immediate
        int length = wc.opcode() == WcOpcode.RECV_RDMA_WITH_IMM ? 0 : wc.byteLen();
        Held h = new Held((int) (wc.wrId() & ~RECEIVE), length, wc.hasImmediate() ? wc.immData() : null);
        if (readingSuspended || !open) {
            held.add(h);
        } else {
            deliver(h);
        }
    }

    private void deliver(Held h) {
        byte[] data = new byte[h.length()];
        receiveMemory.get(h.slot() * buffers.slotSize, data);
        handler.tell(new RdmaProtocol.Received(data, h.immediate()));
        if (!closed) {
            try {
                qp.postReceive(receiveRequest(buffers, h.slot()));
            } catch (RuntimeException e) {
                getContext().getLog().debug("could not repost a receive", e);
            }
        }
    }

    private Behavior<Command> onSetReading(SetReading s) {
        readingSuspended = s.suspended();
        deliverHeld();
        return this;
    }

    private void deliverHeld() {
        while (open && !readingSuspended && !held.isEmpty()) {
            deliver(held.poll());
        }
    }

    private Behavior<Command> onModifyPath(ModifyPath m) {
        try {
            // verbs take MIGRATED on an unarmed QP as a no-op; saying PathMigrated then would be a lie
            if (m.command() instanceof RdmaProtocol.MigratePath
                    && qp.query().migrationState() != MigrationState.ARMED) {
                throw new InvalidStateException("ibv_modify_qp", "no alternate path is armed");
            }
            qp.modify(m.attributes());
            handler.tell(m.command() instanceof RdmaProtocol.MigratePath ? new RdmaProtocol.PathMigrated()
                    : new RdmaProtocol.AlternatePathLoaded());
        } catch (RuntimeException e) {
            handler.tell(new CommandFailed(m.command(), e));
        }
        return this;
    }

    private void failOutstanding(String why) {
        for (int slot = 0; slot < outstanding.length; slot++) {
            DataCommand command = outstanding[slot];
            if (command != null) {
                outstanding[slot] = null;
                freeSlots.add(slot);
                handler.tell(new CommandFailed(command, new ConnectionClosed(why)));
            }
        }
    }
}
