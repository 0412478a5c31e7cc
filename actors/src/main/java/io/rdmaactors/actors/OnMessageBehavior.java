package io.rdmaactors.actors;

import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.Signal;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;

/**
 * A behavior whose messages all go to one method. A receive builder builds its cases and their
 * lambdas for every actor, about a kilobyte for a dozen messages, which an actor per connection
 * end multiplies by the thousands; one method costs nothing per actor and dispatches with an
 * instanceof chain instead of a walk over the cases.
 */
abstract class OnMessageBehavior<T> extends AbstractBehavior<T> {

    OnMessageBehavior(ActorContext<T> context) {
        super(context);
    }

    abstract Behavior<T> onMessage(T message);

    /** Unhandled unless overridden, as a receive builder's signals are. */
    Behavior<T> onSignal(Signal signal) {
        return Behaviors.unhandled();
    }

    @Override
    public final Receive<T> createReceive() {
        return new Receive<>() {
            @Override
            public Behavior<T> receiveMessage(T message) {
                return onMessage(message);
            }

            @Override
            public Behavior<T> receiveSignal(Signal signal) {
                return onSignal(signal);
            }
        };
    }
}
