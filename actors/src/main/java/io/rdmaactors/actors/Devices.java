package io.rdmaactors.actors;

import io.rdmaactors.verbs.Device;
import java.util.Map;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * What the actors that create QPs need of each device: the actor its QPs register with for async
 * events, the poller whose shared completion channels their CQs use, and, with
 * {@code receive-queue = per-device}, its shared receive queue.
 */
record Devices(Map<String, ActorRef<DeviceActor.Command>> actors, Map<String, CompletionPoller> pollers,
               Map<String, SharedReceiveBuffers> receiveQueues) {

    Devices {
        actors = Map.copyOf(actors);
        pollers = Map.copyOf(pollers);
        receiveQueues = Map.copyOf(receiveQueues);
    }

    /** The device's shared receive queue, or null: per-connection receives, or a device not listed at start. */
    SharedReceiveBuffers receiveQueue(Device device) {
        return receiveQueues.get(device.name());
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
