package io.rdmaactors.actors;

import io.rdmaactors.verbs.Device;
import java.util.Map;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * What the actors that create QPs need of each device: the actor its QPs register with for async
 * events, and the poller whose shared completion channels their CQs use.
 */
record Devices(Map<String, ActorRef<DeviceActor.Command>> actors, Map<String, CompletionPoller> pollers) {

    Devices {
        actors = Map.copyOf(actors);
        pollers = Map.copyOf(pollers);
    }

    /** The device's actor, or null for a device the fabric did not list at start. */
    ActorRef<DeviceActor.Command> actor(Device device) {
        return device == null ? null : actors.get(device.name());
    }

    CompletionPoller poller(Device device) {
        CompletionPoller poller = pollers.get(device.name());
        if (poller == null) {
            throw new IllegalStateException("no completion poller for device " + device.name());
        }
        return poller;
    }
}
