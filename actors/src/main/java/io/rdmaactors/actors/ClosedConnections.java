package io.rdmaactors.actors;

import io.rdmaactors.actors.RdmaProtocol.CommandFailed;
import io.rdmaactors.actors.RdmaProtocol.ConnectionCommand;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.pekko.actor.DeadLetter;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.eventstream.EventStream;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.javadsl.BehaviorBuilder;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/**
 * Answers the commands sent to a connection after its actors stopped (a closed connection answers
 * them itself while it lingers), which Pekko would drop as dead letters: each gets
 * CommandFailed(ConnectionClosed) at the handler the connection had. A stopped connection leaves a
 * tombstone (its actors and its handler); dead letters addressed to a tombstone are answered. Tombstones are bounded (the oldest go first), and a dead letter that
 * comes before its tombstone waits for it, as the two travel apart. A Listen, Connect or
 * JoinMulticast lost with the manager or CM event actor that was to carry it out (a restart, the
 * system's shutdown) fails to its handler.
 */
final class ClosedConnections {

    /** How many stopped connections are remembered. */
    private static final int REMEMBERED = 16_384;
    /**
     * How many early dead letters wait for their tombstone: a manager restart stops every
     * connection at once, and each may have a write queue's worth of commands on the way (a bound
     * of 1,024 lost answers with 200 connections).
     */
    private static final int WAITING = 1 << 18;

    /** A connection stopped: commands to any of {@code actors} go to {@code handler}. */
    record Stopped(List<ActorRef<?>> actors, ActorRef<CommandFailed> handler) {

        /** Tells every ClosedConnections of the system. */
        void publish(ActorSystem<?> system) {
            system.eventStream().tell(new EventStream.Publish<>(this));
        }
    }

    private ClosedConnections() {
    }

    /**
     * Starts it, subscribed before this returns: the subscriptions reach the event stream ahead of
     * anything published after, where ones made in the actor's setup could come after a dead letter
     * published meanwhile and miss it.
     */
    static void start(ActorSystem<?> system) {
        ActorRef<Object> closed = system.systemActorOf(create(), "rdma-closed-connections", Props.empty());
        system.eventStream().tell(new EventStream.Subscribe<>(DeadLetter.class, closed.narrow()));
        // connections publish their Stopped on the event stream: none of them needs a route here
        system.eventStream().tell(new EventStream.Subscribe<>(Stopped.class, closed.narrow()));
    }

    private static Behavior<Object> create() {
        return Behaviors.setup(ctx -> {
            Map<org.apache.pekko.actor.ActorRef, ActorRef<CommandFailed>> tombstones =
                    new LinkedHashMap<>(256, 0.75f, false) {
                        @Override
                        protected boolean removeEldestEntry(
                                Map.Entry<org.apache.pekko.actor.ActorRef, ActorRef<CommandFailed>> eldest) {
                            return size() > REMEMBERED;
                        }
                    };
            ArrayDeque<DeadLetter> early = new ArrayDeque<>();
            return Behaviors.receive(Object.class)
                    .onMessage(Stopped.class, s -> {
                        s.actors().forEach(a -> tombstones.put(Adapter.toClassic(a), s.handler()));
                        for (Iterator<DeadLetter> i = early.iterator(); i.hasNext(); ) {
                            DeadLetter d = i.next();
                            ActorRef<CommandFailed> handler = tombstones.get(d.recipient());
                            if (handler != null) {
                                i.remove();
                                answer(d, handler);
                            }
                        }
                        return Behaviors.same();
                    })
                    .onMessage(DeadLetter.class, letter -> {
                        if (isToManager(letter) && RdmaManager.refuse(startedBy(letter.message()),
                                new RdmaProtocol.ConnectionClosed("rdma-actors stopped or restarted before it was carried out"))) {
                            return Behaviors.same();
                        }
                        if (!isUserCommand(letter.message())) {
                            return Behaviors.same();
                        }
                        ActorRef<CommandFailed> handler = tombstones.get(letter.recipient());
                        if (handler != null) {
                            answer(letter, handler);
                        } else {
                            if (early.size() == WAITING) {
                                early.poll();
                            }
                            early.add(letter);
                        }
                        return Behaviors.same();
                    })
                    .build();
        });
    }

    /** Whether the letter was for the manager or one of its children (the CM event actor). */
    private static boolean isToManager(DeadLetter letter) {
        String path = letter.recipient().path().toStringWithoutAddress();
        String manager = "/system/" + Rdma.MANAGER_NAME;
        return path.equals(manager) || path.startsWith(manager + "/");
    }

    /** The user's command a CM event actor was to start, or {@code message} itself. */
    private static Object startedBy(Object message) {
        return message instanceof CmEventActor.Start s ? s.command() : message;
    }

    private static boolean isUserCommand(Object message) {
        return message instanceof ConnectionCommand && !(message instanceof ConnectionProtocol.Internal)
                && !(message instanceof RdmaProtocol.Release);
    }

    private static void answer(DeadLetter letter, ActorRef<CommandFailed> handler) {
        refuse(letter.message(), handler);
    }

    /**
     * A closed connection's actor after {@code first} (its own cases): the library's messages and
     * releases are ignored, every other command of the user's refused at once.
     */
    static BehaviorBuilder<ConnectionCommand> refusing(BehaviorBuilder<ConnectionCommand> first,
                                                       ActorRef<? super CommandFailed> handler) {
        return first.onMessage(ConnectionProtocol.Internal.class, i -> Behaviors.same())
                .onMessage(RdmaProtocol.Release.class, r -> Behaviors.same())
                .onMessage(ConnectionCommand.class, c -> {
                    refuse(c, handler);
                    return Behaviors.same();
                });
    }

    /** Answers {@code command}, sent to a closed connection, where its answer goes: its reply target or {@code handler}. */
    static void refuse(Object command, ActorRef<? super CommandFailed> handler) {
        RdmaProtocol.refuse(command, handler, new RdmaProtocol.ConnectionClosed("the connection is closed"));
    }
}
