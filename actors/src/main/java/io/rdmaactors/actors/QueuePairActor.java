package io.rdmaactors.actors;

import io.rdmaactors.actors.ConnectionProtocol.Drain;
import io.rdmaactors.actors.ConnectionProtocol.ModifyPath;
import io.rdmaactors.actors.ConnectionProtocol.Open;
import io.rdmaactors.actors.ConnectionProtocol.Quiesce;
import io.rdmaactors.actors.RdmaProtocol.CommandFailed;
import io.rdmaactors.actors.RdmaProtocol.ConnectionClosed;
import io.rdmaactors.actors.RdmaProtocol.ConnectionCommand;
import io.rdmaactors.actors.RdmaProtocol.ConnectionEvent;
import io.rdmaactors.actors.RdmaProtocol.DataCommand;
import io.rdmaactors.actors.RendezvousRegions.LargeSend;
import io.rdmaactors.verbs.CompletionQueue;
import io.rdmaactors.verbs.InvalidStateException;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.MigrationState;
import io.rdmaactors.verbs.PostException;
import io.rdmaactors.verbs.QpAttributes;
import io.rdmaactors.verbs.QueueFullException;
import io.rdmaactors.verbs.QueuePair;
import io.rdmaactors.verbs.ScatterGatherElement;
import io.rdmaactors.verbs.SendWorkRequest;
import io.rdmaactors.verbs.WcOpcode;
import io.rdmaactors.verbs.WcStatus;
import io.rdmaactors.verbs.WorkCompletion;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.Signal;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.util.ByteString;

/**
 * Owns a connection's QP and its registered buffers, and consumes its CQ. It is the connection's
 * data path: the handler's data commands come here straight (its {@code Connected} names this
 * actor), and control commands go on to the connection actor. A command to an idle send queue is
 * posted at once; the data commands of one mailbox run after it are posted as one work request
 * list (one doorbell), never more than the send queue holds;
 * beyond that they wait in the write queue, in order, and are posted as completions free the send
 * queue. Only when the write queue is full too is a command refused, with WritingSuspended (Pekko
 * IO's NACK protocol). Completions are polled in batches when the device's completion poller says
 * the CQ fired, and, on one of the device's few spin turns, again for {@code completion-spin} after
 * that (then, while an answer to what it sent is awaited, for {@code completion-yield} more,
 * yielding the thread between polls) before the CQ is re-armed. Every
 * command is answered exactly once: on its completion, on its flush, or when the connection closes
 * first.
 */
final class QueuePairActor extends OnMessageBehavior<ConnectionCommand> {

    /** Posts the data commands gathered since the last flush; it follows them in the mailbox. */
    private record Flush() implements ConnectionProtocol.QueuePairCommand {
    }

    private record Notified() implements ConnectionProtocol.QueuePairCommand {
    }

    /** The next poll of a spin, told once per poll: it carries nothing, so one instance serves them all. */
    private record PollAgain() implements ConnectionProtocol.QueuePairCommand {
        static final PollAgain NEXT = new PollAgain();
    }

    private record ChannelFailed(Throwable cause) implements ConnectionProtocol.QueuePairCommand {
    }

    /** IB's encoding of the shortest receiver-not-ready wait, 0.01 ms. */
    private static final int MIN_RNR_TIMER = 1;
    /**
     * wr_id of the closing notice: a Send of no bytes with the reserved immediate, posted last by a
     * Close or ConfirmedClose, so the peer tells a close from a failure (rdma_cm's disconnect does
     * not). It needs no buffer, so closing registers nothing.
     */
    private static final long CLOSING = 1L << 61;

    /** The read of a large message the peer announced, into memory registered for it. */
    private record LargeRead(ControlMessage.Ready ready, ReceiveQueue.Large into, MemoryRegion region) {
    }

    /** Tells the peer its large message was read. */
    private record SendDone(ControlMessage.Done done) {
    }

    /** Tells the peer to pause (or resume) what takes this side's receives: this side is on a shared receive queue. */
    private record FlowControl(boolean pause) {
    }

    private final QueuePair qp;
    /** The connection's CQ: this actor is its only consumer; the parent CQ actor destroys it. */
    private final CompletionQueue cq;
    private final CompletionPoller.Subscription completions;
    private final CompletionWait wait;
    /** Completion events reach this actor where they are raised, on a thread that polls for work anyway. */
    private final boolean eventsWakeNoThread;
    private final WorkCompletion[] batch = new WorkCompletion[32];
    private final ConnectionBuffers buffers;
    /** What the handler may be given and when, and the receive slots and arrays given back. */
    private final ReceiveQueue receives;
    private ActorRef<ConnectionEvent> handler;
    /**
     * The messages this poll delivered, told to the handler as one {@link RdmaProtocol.ReceivedBatch}
     * when the poll ends or before anything else is told to it; null unless the connection's options
     * ask for batches.
     */
    private final List<RdmaProtocol.Received> receivedBatch;
    private final ActorRef<ConnectionCommand> connection;
    /** The send slots, what each outstanding request carries, and the write queue. */
    private final SendQueue sends;
    private final int maxMessageSize;
    /** Memory the handler registered, and its deregistrations waiting for the commands using it. */
    private final LocalRegions regions;
    /** Memory registered for large Sends both ways, deregistered when each is through or the connection ends. */
    private final RendezvousRegions rendezvous;
    /** The first error completion other than a flush: it decides how the connection ended. */
    private RdmaProtocol.WorkRequestFailed failure;
    /** The connection waits for a graceful close: tell it Quiesced once nothing is outstanding. */
    private boolean quiescing;
    /** The closing notice is posted; Quiesced waits for its completion. */
    private boolean closingNoticePosted;
    /** The peer's closing notice came: its disconnect is a close, not a failure. */
    private boolean peerClosing;
    /** Data commands of this mailbox run, posted together by the Flush that follows them. */
    private final List<DataCommand> pending = new ArrayList<>();
    /** The arrays of a post of one request, the common case, made at the first and kept (QueuePair.postSend). */
    private SendWorkRequest[] oneSend;
    private int[] oneSlot;
    private boolean flushScheduled;
    /** Polling again after completions, on one of the device's spin turns; re-armed when the spin ends. */
    private boolean spinning;
    /**
     * The device's count of answers taken on wake-ups when this spin began or last found completions
     * (CompletionPoller): the others' answers since then are what the spin gives way to.
     */
    private long answersAtFound;
    /** The same count after this connection last took an answer on a wake-up, or when it started. */
    private long answersSeen;
    /** A message was ever delivered to the handler: the connection carries requests and answers. */
    private boolean delivered;
    /** Posted since the last message was delivered, on a connection that gets answers: one may come soon. */
    private boolean awaitingAnswer;
    /**
     * This poll delivered a message that answers one sent: the next poll waits behind the handler's
     * turn. Cleared as each poll of a spin begins (onNotified, onPollAgain).
     */
    private boolean answerDelivered;
    /** Tells this actor PollAgain from the dispatcher's queue, behind what this mailbox run scheduled; made at its first use. */
    private Runnable pollAgainLater;
    private boolean writingSuspended;
    /** The handler sent ResumeWriting: resume once half the send queue is free. */
    private boolean resumeRequested;
    /** This side is on a shared receive queue and told the peer to pause (its FlowControl may still wait to go). */
    private boolean toldPeerToPause;
    /** The peer's reader, on a shared receive queue, is paused: what would take one of its receives waits. */
    private boolean peerPaused;
    /** The handler asked to close, or the connection is draining: data commands are refused. */
    private boolean closing;

    static Behavior<ConnectionCommand> create(QueuePair qp, ConnectionBuffers buffers, ActorRef<ConnectionEvent> handler,
                                              ActorRef<ConnectionCommand> connection, CompletionQueue cq,
                                              CompletionPoller.Subscription completions, RdmaSettings settings) {
        return Behaviors.setup(ctx -> new QueuePairActor(ctx, qp, buffers, handler, connection, cq, completions,
                settings));
    }

    private QueuePairActor(ActorContext<ConnectionCommand> ctx, QueuePair qp, ConnectionBuffers buffers,
                           ActorRef<ConnectionEvent> handler, ActorRef<ConnectionCommand> connection,
                           CompletionQueue cq, CompletionPoller.Subscription completions,
                           RdmaSettings settings) {
        super(ctx);
        this.cq = cq;
        this.qp = qp;
        this.buffers = buffers;
        this.handler = handler;
        this.receivedBatch = settings.receivedBatches() ? new ArrayList<>() : null;
        this.connection = connection;
        // polling on after completions saves the wake-up that would bring the next one; where the
        // provider pushes completion events to this actor and its thread polls for work anyway
        // (the data path's dispatcher), there is none to save, and the polls only delay the other
        // actors on the thread, the peer's among them; unless the polls read the link the
        // connection runs on (CompletionQueue.pollProgresses)
        this.eventsWakeNoThread = completions.eventsPushed() && SpinningExecutor.onWorkerThread();
        this.wait = settings.waitMode().equals(RdmaSettings.SPIN) ? CompletionWait.latency()
                : new CompletionWait(settings.completionSpin().toNanos(), settings.completionYield().toNanos());
        this.sends = new SendQueue(buffers.send, settings.writeQueue());
        this.rendezvous = new RendezvousRegions(buffers.pd, buffers.sharesDomain());
        this.regions = new LocalRegions(buffers, sends, rendezvous);
        this.maxMessageSize = settings.maxMessageSize();
        this.receives = new ReceiveQueue(qp, buffers, settings);
        this.completions = completions;
        // the device's count so far is other connections' answers, not ones taken while this waited
        this.answersSeen = completions.answersOnWakeUps();
        completions.route(ctx.getSelf(), new Notified(), ChannelFailed::new);
        completions.rearm();
        pollAll();
    }

    @Override
    Behavior<ConnectionCommand> onMessage(ConnectionCommand m) {
        if (m instanceof DataCommand d) {
            return onData(d);
        }
        if (m instanceof RdmaProtocol.Batch b) {
            return onBatch(b);
        }
        if (m instanceof Flush) {
            flush();
            return this;
        }
        if (m instanceof Notified) {
            return onNotified();
        }
        if (m instanceof PollAgain) {
            return onPollAgain();
        }
        if (m instanceof ChannelFailed f) {
            throw new IllegalStateException("the completion channel failed", f.cause());
        }
        if (m instanceof RdmaProtocol.SuspendReading) {
            return setReading(true);
        }
        if (m instanceof RdmaProtocol.ResumeReading) {
            return setReading(false);
        }
        if (m instanceof RdmaProtocol.ResumeWriting) {
            flush();
            resumeRequested = true;
            resumeWhenRoom();
            return this;
        }
        if (m instanceof Open) {
            // what arrived before took receives that no poll grew for: grow for them now, or a
            // message kept in place could leave the peer no receive at all
            int arrived = receives.open();
            shortenReceiverNotReadyWait();
            tellPeerWhetherPaused(); // the handler's SuspendReading may overtake this Open
            deliverWaiting();
            growReceives(arrived);
            return this;
        }
        if (m instanceof ModifyPath p) {
            return onModifyPath(p);
        }
        if (m instanceof Quiesce) {
            flush();
            closing = true;
            quiescing = true;
            reportQuiesced();
            return this;
        }
        if (m instanceof Drain) {
            pollAll();
            failAll("the connection closed");
            endSpin();
            completions.silence();
            tellConnection(new ConnectionProtocol.QueuePairDrained(failure, peerClosing));
            return closed(handler);
        }
        if (m instanceof RdmaProtocol.Register r) {
            handler = r.handler();
            tellConnection(r);
            return this;
        }
        if (m instanceof RdmaProtocol.Release r) {
            onRelease(r.received());
            return this;
        }
        if (m instanceof RdmaProtocol.RegisterMemory r) {
            regions.register(r);
            return this;
        }
        if (m instanceof RdmaProtocol.DeregisterMemory d) {
            onDeregisterMemory(d);
            return this;
        }
        if (m instanceof ConnectionProtocol.BindWindow b) {
            if (closing) {
                fail(b, new ConnectionClosed("the connection is closing"));
            } else {
                sends.enqueue(b);
                postQueued();
            }
            return this;
        }
        return toConnection(m);
    }

    @Override
    Behavior<ConnectionCommand> onSignal(Signal signal) {
        if (signal instanceof PostStop) {
            endSpin();
            completions.silence();
            failAll("the connection stopped");
            return this;
        }
        return super.onSignal(signal);
    }

    /**
     * Drained: the CQ actor frees the QP and its buffers, and the data commands that still come
     * are answered at once. Holds nothing but the handler, so a closed connection costs no memory
     * while it lingers.
     */
    private static Behavior<ConnectionCommand> closed(ActorRef<ConnectionEvent> handler) {
        return ClosedConnections.refusing(Behaviors.receive(ConnectionCommand.class), handler).build();
    }

    /**
     * A Send that finds no receive posted here is NAKed receiver-not-ready, and its sender waits
     * the time this QP names before it tries again: rdma_cm sets 0.64 ms, so a stream whose
     * receiver fell a few messages behind stalled for that long each time. A receive is reposted
     * within microseconds of its delivery, so the sender is asked to wait the shortest step,
     * 10 us (RTS to RTS takes the RNR timer; a QP that refuses keeps rdma_cm's).
     */
    private void shortenReceiverNotReadyWait() {
        try {
            qp.modify(QpAttributes.of().minRnrTimer(MIN_RNR_TIMER));
        } catch (RuntimeException e) {
            getContext().getLog().debug("the QP keeps its RNR timer", e);
        }
    }

    /** Control belongs to the connection actor; what the handler sent before it is posted first. */
    private Behavior<ConnectionCommand> toConnection(ConnectionCommand command) {
        flush();
        if (command instanceof RdmaProtocol.Close || command instanceof RdmaProtocol.ConfirmedClose
                || command instanceof RdmaProtocol.Abort) {
            closing = true;
        }
        tellConnection(command);
        return this;
    }

    private Behavior<ConnectionCommand> onData(DataCommand command) {
        if (!gather(command) || flushScheduled) {
            return this;
        }
        if (pending.size() == 1 && sends.idle()) {
            // nothing outstanding, nothing waiting: posted at once, a request-response connection's
            // usual case, which then pays no Flush message; a burst's later commands find this one
            // outstanding and go together after it
            flush();
            return this;
        }
        flushScheduled = true;
        getContext().getSelf().tell(new Flush());
        return this;
    }

    /** A Batch's commands gathered as if each came alone, then posted as one list, with what came before. */
    private Behavior<ConnectionCommand> onBatch(RdmaProtocol.Batch batch) {
        for (DataCommand command : batch.commands()) {
            gather(command);
        }
        if (!flushScheduled) {
            flush();
        }
        return this;
    }

    /** Adds the command to those the next flush posts; false if it was refused instead. */
    private boolean gather(DataCommand command) {
        if (closing) {
            answer(command, new CommandFailed(command, new ConnectionClosed("the connection is closing")));
            return false;
        }
        RuntimeException refused = regions.refusal(command);
        if (refused != null) {
            answer(command, new CommandFailed(command, refused));
            return false;
        }
        pending.add(command);
        return true;
    }

    /**
     * Queues what this mailbox run brought, in order, and posts as much of the write queue as the
     * send queue has room for. Until the handler's ResumeWriting is answered everything is
     * refused, so a stream the handler resends keeps its order.
     */
    private void flush() {
        flushScheduled = false;
        for (DataCommand command : pending) {
            if (writingSuspended || !sends.hasRoomForCommand()) {
                refuseFull(command);
            } else {
                sends.enqueue(command);
            }
        }
        pending.clear();
        postQueued();
    }

    /** A data command's answer goes to its replyTo, or to the handler. */
    private void answer(DataCommand command, ConnectionEvent event) {
        if (command.replyTo() != null) {
            command.replyTo().tell(event);
        } else {
            tellHandler(event);
        }
    }

    /** Tells the handler {@code event} after the messages delivered before it. */
    private void tellHandler(ConnectionEvent event) {
        handOverBatch();
        handler.tell(event);
    }

    /**
     * Tells the connection actor {@code message} after the messages delivered before it: what it
     * tells the handler in turn (Disconnected, say) must not overtake them.
     */
    private void tellConnection(ConnectionCommand message) {
        handOverBatch();
        connection.tell(message);
    }

    /** The messages delivered since the last hand-over, as one batch, if any. */
    private void handOverBatch() {
        if (receivedBatch != null && !receivedBatch.isEmpty()) {
            handler.tell(new RdmaProtocol.ReceivedBatch(receivedBatch));
            receivedBatch.clear();
        }
    }

    /** Posts the head of the write queue as one list; a request the QP refuses fails alone, the rest are posted. */
    private void postQueued() {
        int n = sends.postable();
        if (n == 0) {
            return;
        }
        SendWorkRequest[] requests;
        int[] slots;
        if (n > 1) {
            requests = new SendWorkRequest[n];
            slots = new int[n];
        } else {
            if (oneSend == null) {
                oneSend = new SendWorkRequest[1];
                oneSlot = new int[1];
            }
            requests = oneSend;
            slots = oneSlot;
        }
        int count = 0;
        for (int i = 0; i < n; i++) {
            Object item = sends.nextWaiting(peerPaused, QueuePairActor::takesPeerReceive,
                    QueuePairActor::bypassesPause);
            if (item == null) {
                break;
            }
            int slot;
            try {
                slot = sends.takeSlot();
            } catch (RuntimeException e) {
                fail(item, e); // registering more slots failed (a removed device): the command is answered
                continue;
            }
            try {
                if (item instanceof RdmaProtocol.Send send) {
                    checkMessageSize(send);
                    if (send.size() > buffers.send.slotSize()) {
                        LargeSend large = rendezvous.announce(send);
                        item = large;
                        if (large.window() != null) {
                            // its window is bound in this slot; the announcement goes next, behind the bind
                            sends.requeue(large);
                            item = new RendezvousRegions.WindowBind(large);
                        }
                    }
                }
                requests[count] = sends.fenced(request(item, slot),
                        item instanceof RdmaProtocol.Read || item instanceof LargeRead);
            } catch (RuntimeException e) {
                sends.releaseSlot(slot);
                fail(item, e);
                continue;
            }
            sends.hold(slot, item);
            slots[count++] = slot;
        }
        for (int from = 0; from < count; ) {
            try {
                qp.postSend(from == 0 && count == requests.length ? requests : Arrays.copyOfRange(requests, from, count));
                awaitingAnswer = delivered;
                if (awaitingAnswer && spinning) {
                    // the answer's clock starts now: the handler's turn before it does not use up the busy part
                    wait.posted(System.nanoTime());
                }
                takeBackReleased(slots, from, count);
                from = count;
            } catch (PostException e) {
                takeBackReleased(slots, from, from + e.failedIndex());
                unpost(slots[from + e.failedIndex()], e);
                from += e.failedIndex() + 1;
            } catch (RuntimeException e) {
                for (int i = from; i < count; i++) {
                    unpost(slots[i], e);
                }
                from = count;
            }
        }
        regions.deregisterUnused(); // a Send that failed to post may have been the last from its region
    }

    private void refuseFull(DataCommand command) {
        answer(command, new CommandFailed(command, new QueueFullException("ibv_post_send",
                "the send queue holds " + sends.capacity() + " requests and the write queue "
                        + sends.limit() + " (rdma-actors.write-queue)")));
        if (!writingSuspended) {
            writingSuspended = true;
            tellHandler(new RdmaProtocol.WritingSuspended());
        }
    }

    private void unpost(int slot, RuntimeException cause) {
        fail(sends.vacate(slot), cause);
    }

    /**
     * Answers a work item that will not complete: a user's command with CommandFailed; a rendezvous
     * step frees its memory, and a read the peer waits for ends the connection (the message is lost).
     */
    private void fail(Object item, Throwable cause) {
        if (item instanceof DataCommand command) {
            answer(command, new CommandFailed(command, cause));
        } else if (item instanceof LargeSend large && rendezvous.fail(large)) {
            answer(large.send(), new CommandFailed(large.send(), cause));
        } else if (item instanceof RendezvousRegions.WindowBind b && rendezvous.fail(b.large())) {
            answer(b.large().send(), new CommandFailed(b.large().send(), cause));
        } else if (item instanceof LargeRead read) {
            rendezvous.release(read.region());
            if (!closing) {
                tellConnection(new ConnectionProtocol.QueuePairFailed(cause));
            }
        } else if (item instanceof ConnectionProtocol.BindWindow b) {
            b.export().replyTo().tell(new CommandFailed(b.export(), cause));
        }
    }

    /**
     * The connection is over: everything not yet posted, everything outstanding and every large
     * Send whose Done never came fails once; every region registered for rendezvous is deregistered.
     */
    private void failAll(String why) {
        flushScheduled = false;
        pending.forEach(c -> fail(c, new ConnectionClosed(why)));
        pending.clear();
        sends.drain().forEach(item -> fail(item, new ConnectionClosed(why)));
        rendezvous.outstanding().forEach(large -> fail(large, new ConnectionClosed(why)));
        rendezvous.close();
        regions.connectionEnded();
    }

    private void checkMessageSize(RdmaProtocol.Send send) {
        if (send.size() > maxMessageSize) {
            throw new IllegalArgumentException(send.size() + " bytes exceed the connection's largest message of "
                    + maxMessageSize + " (max-message-size)");
        }
    }

    /** Nothing outstanding: the closing notice goes last; Quiesced follows its completion. */
    private void reportQuiesced() {
        if (quiescing && !closingNoticePosted && sends.idle() && rendezvous.nothingAnnounced()) {
            closingNoticePosted = true;
            try {
                qp.postSend(SendWorkRequest.sendWithImmediate(CLOSING, RdmaProtocol.RESERVED_IMMEDIATE));
            } catch (RuntimeException e) {
                onClosingNoticeSent(null); // the QP is failing: the disconnect follows anyway
            }
        }
    }

    /** The peer has the closing notice (or it failed with the QP, whose error the connection hears). */
    private void onClosingNoticeSent(WorkCompletion wc) {
        if (wc != null && !wc.isSuccess() && wc.status() != WcStatus.WR_FLUSH_ERR && failure == null) {
            failure = new RdmaProtocol.WorkRequestFailed(wc.status());
        }
        if (quiescing) {
            quiescing = false;
            tellConnection(new ConnectionProtocol.QueuePairQuiesced());
        }
    }

    private Behavior<ConnectionCommand> onNotified() {
        answerDelivered = false;
        boolean polled = false;
        boolean othersBusy = false;
        if (awaitingAnswer && !spinning && wait.givesWay()) {
            // whether this wake-up brought the answer decides whether a spin begins: poll first
            pollAll();
            polled = true;
            if (answerDelivered) {
                // others took answers since this connection last did: their completions keep the cores busy
                othersBusy = completions.othersBusySince(answersSeen);
                answersSeen = completions.answeredOnWakeUp();
            }
        }
        if (othersBusy || (eventsWakeNoThread && !cq.pollProgresses()) || wait.skipsSpin()
                || !(spinning || completions.takeSpinTurn())) {
            completions.rearm();
            pollAll(); // what completed before the arm
            return this;
        }
        if (!polled) {
            pollAll();
        }
        wait.begin(System.nanoTime());
        if (!spinning) {
            spinning = true;
            answersAtFound = completions.answersOnWakeUps();
            pollAgain();
        }
        return this;
    }

    /** One poll per mailbox turn while the spin lasts; then re-arm, and poll once more for what raced the arm. */
    private Behavior<ConnectionCommand> onPollAgain() {
        answerDelivered = false;
        if (wait.givesWay() && completions.othersBusySince(answersAtFound)) {
            // more request-response connections than spin turns take answers: the cores have their
            // work, and this one's answer comes through the armed CQ
            completions.rearm();
            pollAll();
            endSpin();
            wait.gaveWay();
            return this;
        }
        int found = pollAll();
        long now = System.nanoTime(); // one clock read a turn: a stream's polls pay for each
        if (found > 0) {
            wait.found(now);
            answersAtFound = completions.answersOnWakeUps();
        }
        switch (wait.next(now, awaitingAnswer)) {
            case POLL -> pollAgain();
            case YIELD_THEN_POLL -> {
                // whoever shares this core (the peer, an I/O thread) runs first
                Thread.yield();
                getContext().getSelf().tell(PollAgain.NEXT);
            }
            case REARM -> {
                completions.rearm();
                if (pollAll() > 0) {
                    wait.foundAfterRearm(System.nanoTime());
                    pollAgain();
                } else {
                    endSpin();
                    wait.end();
                }
            }
        }
        return this;
    }

    /**
     * The spin's next poll. After one that delivered an answer it goes through the dispatcher's
     * queue, so that this mailbox run ends and the handler, scheduled on this thread just before,
     * runs next here (and sends what follows) instead of waiting for the run's remaining polls or
     * for another thread to wake and take it. On the data path's dispatcher the poll waits on this
     * thread alone, behind the handler: another thread taking it would keep a second core busy
     * for one connection. It waits there too whenever other tasks wait on this thread: a peer's
     * QP actor in this process, whose request a poll carried on the wire, would otherwise wait for
     * the run's remaining polls, or be taken by a second thread that then parks between round
     * trips. A stream's deliveries answer nothing: its polls stay in this mailbox unless other
     * work waits.
     */
    private void pollAgain() {
        if (answerDelivered || SpinningExecutor.workWaiting()) {
            if (pollAgainLater == null) {
                ActorRef<ConnectionCommand> self = getContext().getSelf();
                pollAgainLater = () -> self.tell(PollAgain.NEXT);
            }
            if (!SpinningExecutor.runAfterQueued(pollAgainLater)) {
                getContext().getExecutionContext().execute(pollAgainLater);
            }
        } else {
            getContext().getSelf().tell(PollAgain.NEXT);
        }
    }

    /** Ends the spin, if one runs, and gives its turn back. */
    private void endSpin() {
        if (spinning) {
            spinning = false;
            completions.endSpinTurn();
        }
    }

    /** A rendezvous message: a Send that carries the reserved immediate. */
    private SendWorkRequest control(int slot, ByteString message) {
        return SendWorkRequest.sendWithImmediate(slot, RdmaProtocol.RESERVED_IMMEDIATE, copyIn(slot, message));
    }

    private SendWorkRequest request(Object command, int slot) {
        if (command instanceof LargeSend large) {
            MemoryRegion region = large.region();
            return control(slot, new ControlMessage.Ready(large.id(), region.length(), region.address(), large.rkey(),
                    large.send().immediate()).encode());
        }
        if (command instanceof RendezvousRegions.WindowBind b) {
            return b.large().bind(slot);
        }
        if (command instanceof LargeRead read) {
            return SendWorkRequest.read(slot, read.ready().address(), read.ready().rkey(), read.region().sge());
        }
        if (command instanceof SendDone done) {
            return control(slot, done.done().encode());
        }
        if (command instanceof FlowControl f) {
            return control(slot, ControlMessage.flowControl(f.pause()));
        }
        if (command instanceof ConnectionProtocol.BindWindow b) {
            return SendWorkRequest.bind(slot, b.window(), b.region(), b.export().access());
        }
        if (command instanceof RdmaProtocol.Send s) {
            ScatterGatherElement sge = s.data() != null ? copyIn(slot, s.data()) : s.from().region().sge(s.from());
            return s.immediate() == null ? SendWorkRequest.send(slot, sge)
                    : SendWorkRequest.sendWithImmediate(slot, s.immediate(), sge);
        }
        if (command instanceof RdmaProtocol.Write w) {
            ScatterGatherElement sge = w.data() != null ? copyIn(slot, w.data()) : w.from().region().sge(w.from());
            long remote = w.target().at(w.offset(), w.size());
            return w.immediate() == null ? SendWorkRequest.write(slot, remote, w.target().rkey(), sge)
                    : SendWorkRequest.writeWithImmediate(slot, w.immediate(), remote, w.target().rkey(), sge);
        }
        if (command instanceof RdmaProtocol.Read r) {
            if (r.into() == null) {
                checkFits(r.length());
            }
            return SendWorkRequest.read(slot, r.source().at(r.offset(), r.length()), r.source().rkey(),
                    r.into() != null ? r.into().region().sge(r.into()) : buffers.send.sge(slot, r.length()));
        }
        if (command instanceof RdmaProtocol.FetchAdd f) {
            return SendWorkRequest.fetchAdd(slot, f.target().at(f.offset(), 8), f.target().rkey(), f.add(),
                    buffers.send.sge(slot, 8));
        }
        RdmaProtocol.CompareSwap c = (RdmaProtocol.CompareSwap) command;
        return SendWorkRequest.compareSwap(slot, c.target().at(c.offset(), 8), c.target().rkey(), c.expected(),
                c.swap(), buffers.send.sge(slot, 8));
    }

    /** Commands using the region told before this are posted first; it is deregistered once none is outstanding. */
    private void onDeregisterMemory(RdmaProtocol.DeregisterMemory d) {
        RuntimeException refused = regions.refusal(d, d.region());
        if (refused != null) {
            d.replyTo().tell(new CommandFailed(d, refused));
            return;
        }
        flush();
        regions.deregisterWhenUnused(d);
        regions.deregisterUnused();
    }

    /** The one copy a send makes: every part of the ByteString into its registered slot. */
    private ScatterGatherElement copyIn(int slot, ByteString data) {
        checkFits(data.size());
        data.copyToBuffer(buffers.send.memory(slot).duplicate().position(buffers.send.offset(slot)));
        return buffers.send.sge(slot, data.size());
    }

    private void checkFits(int length) {
        if (length > buffers.send.slotSize()) {
            throw new IllegalArgumentException(length + " bytes exceed the buffer size of " + buffers.send.slotSize()
                    + " (rdma-actors.buffer-size)");
        }
    }

    /**
     * Polls the CQ empty; returns how many completions it took. A batch that comes back short
     * means the CQ was empty, so no empty poll is paid for (a native call each on rdma-core).
     */
    private int pollAll() {
        int n;
        int total = 0;
        int received = 0;
        do {
            n = cq.poll(batch);
            total += n;
            for (int i = 0; i < n; i++) {
                WorkCompletion wc = batch[i];
                if ((wc.wrId() & ConnectionBuffers.RECEIVE) != 0) {
                    // flushed receives are not traffic: growing on them would register memory only to flush it
                    received += wc.isSuccess() ? 1 : 0;
                    onReceive(wc);
                } else if (wc.wrId() == CLOSING) {
                    onClosingNoticeSent(wc);
                } else {
                    onSendCompletion(wc);
                }
            }
        } while (n == batch.length);
        handOverBatch();
        repostReceives();
        growReceives(received);
        postQueued();
        regions.deregisterUnused();
        resumeWhenRoom();
        reportQuiesced();
        return total;
    }

    /** More receives for a busy connection ({@link ReceiveQueue#grow}); a peer that sent its closing notice sends nothing more. */
    private void growReceives(int consumed) {
        if (peerClosing) {
            return;
        }
        try {
            receives.grow(consumed);
        } catch (RuntimeException e) {
            getContext().getLog().debug("could not post more receives", e);
        }
    }

    private void resumeWhenRoom() {
        if (!writingSuspended || !resumeRequested) {
            return;
        }
        if (sends.nothingWaiting() && sends.room() >= (sends.capacity() + 1) / 2) {
            writingSuspended = false;
            resumeRequested = false;
            tellHandler(new RdmaProtocol.WritingResumed());
        }
    }

    private void onSendCompletion(WorkCompletion wc) {
        int slot = (int) wc.wrId();
        if (!sends.holds(slot)) {
            return; // already answered when the connection closed
        }
        Object item = sends.vacate(slot);
        if (!wc.isSuccess()) {
            RdmaProtocol.WorkRequestFailed failed = new RdmaProtocol.WorkRequestFailed(wc.status());
            boolean first = wc.status() != WcStatus.WR_FLUSH_ERR && failure == null;
            if (first) {
                failure = failed;
            }
            fail(item, failed);
            if (first) {
                // an error completion leaves the QP in ERR: the connection cannot carry anything more
                tellConnection(new ConnectionProtocol.QueuePairFailed(failed));
            }
            return;
        }
        if (item instanceof LargeSend) {
            return; // acknowledged when the peer says Done, which may already have come
        }
        if (item instanceof LargeRead read) {
            if (!receives.read(read.into(), read.region(), read.ready().length())) {
                rendezvous.recycle(read.region());
            }
            sends.enqueue(new SendDone(new ControlMessage.Done(read.ready().id())));
            deliverWaiting();
            return;
        }
        if (item instanceof ConnectionProtocol.BindWindow b) {
            b.export().replyTo().tell(new RdmaProtocol.Exported(
                    new RemoteRegion(b.region().address(), b.region().length(), b.window().rkey())));
            return;
        }
        if (!(item instanceof DataCommand command)) {
            return; // a Done went out
        }
        if (command instanceof RdmaProtocol.Read r) {
            answer(command, new RdmaProtocol.ReadCompleted(command.ack(), r.into() != null ? ByteString.emptyByteString()
                    : copyOut(buffers.send, slot, wc.byteLen())));
        } else if (command instanceof RdmaProtocol.FetchAdd || command instanceof RdmaProtocol.CompareSwap) {
            answer(command, new RdmaProtocol.AtomicCompleted(command.ack(),
                    buffers.send.memory(slot).getLong(buffers.send.offset(slot))));
        } else {
            if (command instanceof RdmaProtocol.Send send && send.releasing() != null && sendsFromReceiveBuffers(send)) {
                receives.takeBackSlot(send.releasing()); // reposted after this poll, with the others
            }
            if (command.ack() != null) {
                answer(command, new RdmaProtocol.Acked(command.ack()));
            }
        }
    }

    private void onReceive(WorkCompletion wc) {
        int slot = (int) (wc.wrId() & ~ConnectionBuffers.RECEIVE);
        if (buffers.shared != null) {
            onSharedReceive(wc, slot);
            return;
        }
        if (!wc.isSuccess()) {
            return; // flushed: the connection is going away
        }
        if (wc.hasImmediate() && wc.immData() == RdmaProtocol.RESERVED_IMMEDIATE
                && wc.opcode() != WcOpcode.RECV_RDMA_WITH_IMM) {
            if (wc.byteLen() == 0) {
                peerClosing = true; // the closing notice carries no bytes
            } else {
                onControl(ControlMessage.decode(receives.control(slot, wc.byteLen())));
            }
            receives.repost(slot);
            return;
        }
        // a write with immediate put its data in exported memory: the receive carries only the immediate
        RdmaProtocol.Received received = receives.arrived(slot,
                wc.opcode() == WcOpcode.RECV_RDMA_WITH_IMM ? 0 : wc.byteLen(), wc.hasImmediate() ? wc.immData() : null);
        if (received != null) {
            deliver(received);
        }
    }

    /** A receive from a shared receive queue: copied out, its slot posted again for any connection. */
    private void onSharedReceive(WorkCompletion wc, int slot) {
        // a write with immediate put its data in exported memory: the receive carries only the immediate
        RdmaProtocol.Received received = !wc.isSuccess() ? null : receives.copiedFromShared(slot,
                wc.opcode() == WcOpcode.RECV_RDMA_WITH_IMM ? 0 : wc.byteLen(), wc.hasImmediate() ? wc.immData() : null);
        try {
            buffers.shared.repost(slot); // a receive that failed had its buffer too
        } catch (RuntimeException e) {
            tellConnection(new ConnectionProtocol.QueuePairFailed(e));
        }
        if (received == null) {
            return;
        }
        boolean control = received.immediate() != null && received.immediate() == RdmaProtocol.RESERVED_IMMEDIATE;
        if (control && received.data().isEmpty()) {
            peerClosing = true;
        } else if (control) {
            onControl(ControlMessage.decode(received.data().asByteBuffer()));
            postQueued();
        } else {
            RdmaProtocol.Received deliverable = receives.arrived(received);
            if (deliverable != null) {
                deliver(deliverable);
            }
        }
    }

    /** The peer announced a large message (read it, in its place among the received ones) or read ours. */
    private void onControl(Object message) {
        if (message instanceof ControlMessage.Ready ready) {
            if (ready.length() > maxMessageSize || ready.length() < 0) {
                tellConnection(new ConnectionProtocol.QueuePairFailed(new IllegalStateException("the peer announced "
                        + ready.length() + " bytes, beyond rdma-actors.max-message-size of " + maxMessageSize)));
                return;
            }
            MemoryRegion region = rendezvous.registerForRead(ready.length());
            sends.enqueue(new LargeRead(ready, receives.announced(ready.immediate()), region));
        } else if (message instanceof ControlMessage.Pause) {
            peerPaused = true;
        } else if (message instanceof ControlMessage.Resume) {
            peerPaused = false;
        } else if (message instanceof ControlMessage.Done done) {
            LargeSend large = rendezvous.done(done.id());
            if (large != null) {
                if (large.send().ack() != null) {
                    answer(large.send(), new RdmaProtocol.Acked(large.send().ack()));
                }
                regions.deregisterUnused(); // it may have been the last use of its registered memory
            }
        }
    }

    private void deliver(RdmaProtocol.Received received) {
        delivered = true;
        // an answer to what this side sent: the handler likely answers it in turn
        answerDelivered |= awaitingAnswer;
        awaitingAnswer = false;
        if (receivedBatch != null) {
            receivedBatch.add(received);
        } else {
            handler.tell(received);
        }
    }

    private void onRelease(RdmaProtocol.Received received) {
        if (returnLent(received)) {
            repostReceives();
            return;
        }
        byte[] data = received.takeArray();
        // a Send or Write told before the Release and not yet posted still carries these bytes:
        // they are left to the garbage collector rather than refilled under it
        if (pending.isEmpty() && sends.nothingWaiting()) {
            receives.keep(data);
        }
    }

    /**
     * The Sends in {@code slots[from, to)} are posted, their data copied (a large one's into its
     * rendezvous memory): what they release ({@link RdmaProtocol.Send#releasing}) is taken back.
     * Earlier commands were posted before them, so none of those still needs the bytes either.
     */
    private void takeBackReleased(int[] slots, int from, int to) {
        for (int i = from; i < to; i++) {
            Object item = sends.held(slots[i]);
            RdmaProtocol.Send send = item instanceof RdmaProtocol.Send s ? s
                    : item instanceof LargeSend large ? large.send() : null;
            // a Send from a receive buffer releases once it completed: reposted earlier, the
            // buffer could take the next message before the device read this one out of it
            if (send != null && send.releasing() != null && !sendsFromReceiveBuffers(send)
                    && !returnLent(send.releasing())) {
                receives.keep(send.releasing().takeArray());
            }
        }
        repostReceives();
    }

    private static boolean sendsFromReceiveBuffers(RdmaProtocol.Send send) {
        return send.from() != null && send.from().region().receiveBuffers;
    }

    /**
     * A message received in place, released: its receive slot is queued for reposting, or the
     * memory a large one was read into goes back to the pool. False when nothing was lent.
     */
    private boolean returnLent(RdmaProtocol.Received received) {
        return receives.takeBackSlot(received) || recycleLent(received);
    }

    /** A large message received in place, released: the memory it was read into goes back to the pool. */
    private boolean recycleLent(RdmaProtocol.Received received) {
        MemoryRegion region = received.takeReadInto(buffers); // only this connection's own are lent
        if (region == null) {
            return false;
        }
        rendezvous.recycle(region);
        return true;
    }

    /** A Read's data out of the send slot it landed in, which is freed, into a ByteString that owns it. */
    private static ByteString copyOut(RegisteredSlots slots, int slot, int length) {
        byte[] data = new byte[length];
        slots.memory(slot).get(slots.offset(slot), data);
        return ByteString.fromArrayUnsafe(data);
    }

    /** Reposts the receives given back since the last call, as one list. */
    private void repostReceives() {
        try {
            receives.repostAll();
        } catch (RuntimeException e) {
            // a receive queue that cannot be refilled would hold the peer back forever: end the connection
            tellConnection(new ConnectionProtocol.QueuePairFailed(e));
        }
    }

    private Behavior<ConnectionCommand> setReading(boolean suspended) {
        receives.suspend(suspended);
        tellPeerWhetherPaused();
        deliverWaiting();
        return this;
    }

    /** On a shared receive queue, once connected: tells the peer whether this side's reader is suspended. */
    private void tellPeerWhetherPaused() {
        if (buffers.receive != null || !receives.isOpen() || receives.suspended() == toldPeerToPause) {
            return;
        }
        toldPeerToPause = receives.suspended();
        // a FlowControl not yet gone said the opposite: the peer, never told, needs neither
        if (!sends.removeWaiting(item -> item instanceof FlowControl)) {
            sends.requeue(new FlowControl(toldPeerToPause));
            postQueued();
        }
    }

    /** What takes one of the peer's receives: held back while the peer's reader is paused. */
    private static boolean takesPeerReceive(Object item) {
        return item instanceof RdmaProtocol.Send || item instanceof LargeSend
                || item instanceof RendezvousRegions.WindowBind
                || item instanceof RdmaProtocol.Write w && w.immediate() != null;
    }

    /**
     * The connection's own control steps pass a paused peer's hold: none takes a receive of the
     * peer's for its user, and two suspended readers must not wait on each other's Done.
     */
    private static boolean bypassesPause(Object item) {
        return item instanceof SendDone || item instanceof LargeRead || item instanceof FlowControl;
    }

    /** Delivers the messages that waited and may go now (after Open, ResumeReading, a large one's read). */
    private void deliverWaiting() {
        for (RdmaProtocol.Received next = receives.nextWaiting(); next != null; next = receives.nextWaiting()) {
            deliver(next);
        }
        handOverBatch();
        repostReceives();
    }

    private Behavior<ConnectionCommand> onModifyPath(ModifyPath m) {
        try {
            // verbs take MIGRATED on an unarmed QP as a no-op; saying PathMigrated then would be a lie
            if (m.command() instanceof RdmaProtocol.MigratePath
                    && qp.query().migrationState() != MigrationState.ARMED) {
                throw new InvalidStateException("ibv_modify_qp", "no alternate path is armed");
            }
            qp.modify(m.attributes());
            tellHandler(m.command() instanceof RdmaProtocol.MigratePath ? new RdmaProtocol.PathMigrated()
                    : new RdmaProtocol.AlternatePathLoaded());
        } catch (RuntimeException e) {
            tellHandler(new CommandFailed(m.command(), e));
        }
        return this;
    }
}
