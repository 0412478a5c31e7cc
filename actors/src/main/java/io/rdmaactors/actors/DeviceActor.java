package io.rdmaactors.actors;

import io.rdmaactors.cm.AsyncEvent;
import io.rdmaactors.cm.AsyncEventType;
import io.rdmaactors.cm.EventPump;
import io.rdmaactors.verbs.Device;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import org.apache.pekko.actor.DeadLetterSuppression;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.PreRestart;
import org.apache.pekko.actor.typed.SupervisorStrategy;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;

/**
 * One per device: pumps the device's async events and routes each to the actor that owns the QP it
 * names; a fatal device error goes to every registered owner.
 */
final class DeviceActor extends AbstractBehavior<DeviceActor.Command> {

    /**
     * Its messages may race its stop (a connection unregistering as a restart stops both): not a
     * dead letter worth a log line.
     */
    interface Command extends DeadLetterSuppression {
    }

    record RegisterQp(int qpNum, ActorRef<RdmaProtocol.ConnectionCommand> owner) implements Command {
    }

    record UnregisterQp(int qpNum) implements Command {
    }

    private record Pumped(AsyncEvent event) implements Command {
    }

    private final Device device;
    private final EventPump<AsyncEvent> pump;
    private final Map<Integer, ActorRef<RdmaProtocol.ConnectionCommand>> owners;

    /** Restarted under supervision, it keeps its owners: connections register once. */
    static Behavior<Command> create(Device device) {
        Map<Integer, ActorRef<RdmaProtocol.ConnectionCommand>> owners = new HashMap<>();
        return Behaviors.supervise(Behaviors.<Command>setup(ctx -> new DeviceActor(ctx, device, owners)))
                .onFailure(SupervisorStrategy.restart().withLimit(10, Duration.ofMinutes(1)));
    }

    private DeviceActor(ActorContext<Command> ctx, Device device,
                        Map<Integer, ActorRef<RdmaProtocol.ConnectionCommand>> owners) {
        super(ctx);
        this.device = device;
        this.owners = owners;
        ActorRef<Command> self = ctx.getSelf();
        this.pump = EventPump.start(RdmaManager.threadPrefix(ctx.getSystem()) + "async-" + device.name(),
                device.asyncEvents(), e -> self.tell(new Pumped(e)), AsyncEvent.SourceFailed::new);
    }

    @Override
    public Receive<Command> createReceive() {
        return newReceiveBuilder()
                .onMessage(RegisterQp.class, r -> {
                    // refused here, not when an event for it would find no one to tell
                    owners.put(r.qpNum(), Objects.requireNonNull(r.owner(), "a QP's owner"));
                    return this;
                })
                .onMessage(UnregisterQp.class, u -> {
                    owners.remove(u.qpNum());
                    return this;
                })
                .onMessage(Pumped.class, p -> onEvent(p.event()))
                .onSignal(PostStop.class, s -> stopPump())
                .onSignal(PreRestart.class, s -> stopPump())
                .build();
    }

    private Behavior<Command> stopPump() {
        pump.close();
        return this;
    }

    private Behavior<Command> onEvent(AsyncEvent event) {
        if (event instanceof AsyncEvent.QpEvent qp) {
            ActorRef<RdmaProtocol.ConnectionCommand> owner = owners.get(qp.qpNum());
            if (owner != null) {
                owner.tell(new ConnectionProtocol.Async(event));
            }
        } else if (event.type() == AsyncEventType.DEVICE_FATAL) {
            getContext().getLog().error("device {} failed", device.name());
            owners.values().forEach(o -> o.tell(new ConnectionProtocol.Async(event)));
        } else if (event instanceof AsyncEvent.SourceFailed failed) {
            if (device.isAlive()) {
                getContext().getLog().warn("async events of {} failed", device.name(), failed.cause());
            }
        } else {
            getContext().getLog().info("{} on {}", event, device.name());
        }
        return this;
    }
}
