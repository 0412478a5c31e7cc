package io.rdmaactors.testkit.chaos;

import io.rdmaactors.actors.RdmaProtocol;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/** The chaos server's listener handler: every request gets a {@link ChaosAgent} and is accepted by it. */
final class ChaosListener {

    private ChaosListener() {
    }

    /**
     * @param listening set to the Listening once bound
     * @param servers   the server side's Connected of every live connection, by agent name, for faults
     */
    static Behavior<RdmaProtocol.ListenerEvent> create(AtomicReference<RdmaProtocol.Listening> listening,
                                                       Map<String, RdmaProtocol.Connected> servers) {
        return Behaviors.setup(ctx -> {
            long[] agents = {0};
            return Behaviors.receive(RdmaProtocol.ListenerEvent.class)
                    .onMessage(RdmaProtocol.Listening.class, l -> {
                        listening.set(l);
                        return Behaviors.same();
                    })
                    .onMessage(RdmaProtocol.ConnectionRequested.class, r -> {
                        String name = "agent-" + ++agents[0];
                        ctx.spawn(ChaosAgent.create(r.connection(), c -> {
                            if (c == null) {
                                servers.remove(name);
                            } else {
                                servers.put(name, c);
                            }
                        }), name);
                        return Behaviors.same();
                    })
                    .onMessage(RdmaProtocol.Unbound.class, u -> Behaviors.stopped())
                    .onAnyMessage(other -> Behaviors.same())
                    .build();
        });
    }
}
