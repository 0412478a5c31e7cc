package io.rdmaactors.actors;

import com.typesafe.config.Config;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.apache.pekko.actor.ActorCell;
import org.apache.pekko.actor.ActorRefWithCell;
import org.apache.pekko.actor.Cell;
import org.apache.pekko.actor.Deploy$;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.dispatch.Dispatchers;

/**
 * The {@code rdma-actors} section of the configuration (see reference.conf), with what one
 * connection's {@link RdmaProtocol.ConnectionOptions} set ({@code receiveInPlace}, the smallest
 * message left in its receive buffer, and {@code receivedBatches}, only there).
 */
public record RdmaSettings(String fabric, Map<String, String> fabricOptions, int sendQueueDepth,
                           int receiveQueueDepth, int bufferSize, int writeQueue, int maxMessageSize,
                           Duration resolveTimeout, Duration connectTimeout,
                           Duration acceptTimeout, Duration shutdownCloseTimeout, int completionPollers,
                           Duration completionSpin, Duration completionYield, String waitMode, String dispatcher,
                           String verbsDispatcher, int receiveInPlace, String receiveQueue,
                           boolean receivedBatches) {

    public RdmaSettings {
        fabricOptions = Map.copyOf(fabricOptions);
        require(sendQueueDepth >= 1, "send-queue-depth", sendQueueDepth, "at least 1");
        require(receiveQueueDepth >= 1, "receive-queue-depth", receiveQueueDepth, "at least 1");
        // a receive buffer holds a rendezvous announcement at least
        require(bufferSize >= 32, "buffer-size", bufferSize, "at least 32 bytes");
        require(writeQueue >= 0, "write-queue", writeQueue, "not negative");
        require(maxMessageSize >= 1, "max-message-size", maxMessageSize, "at least 1 byte");
        require(!shutdownCloseTimeout.isNegative(), "shutdown-close-timeout", shutdownCloseTimeout, "not negative");
        require(completionPollers >= 1, "completion-pollers", completionPollers, "at least 1");
        require(!completionSpin.isNegative(), "completion-spin", completionSpin, "not negative");
        require(!completionYield.isNegative(), "completion-yield", completionYield, "not negative");
        require(waitMode.equals(BALANCED) || waitMode.equals(SPIN), "wait", waitMode, BALANCED + " or " + SPIN);
        require(receiveQueue.equals(PER_CONNECTION) || receiveQueue.equals(PER_DEVICE), "receive-queue", receiveQueue,
                PER_CONNECTION + " or " + PER_DEVICE);
    }

    /** Each connection receives into buffers of its own. */
    public static final String PER_CONNECTION = "per-connection";
    /** {@code receive-queue}'s default: connections receive from their device's shared receive queue. */
    public static final String PER_DEVICE = "per-device";

    /** Whether a connection made with these settings receives from its device's shared receive queue. */
    boolean receivesFromDevice() {
        // receiving in place lends a receive buffer to the handler: it needs buffers of its own
        return receiveQueue.equals(PER_DEVICE) && receiveInPlace == NEVER_IN_PLACE;
    }

    /** {@code receiveInPlace} unless a connection's options set it: every message is copied. */
    static final int NEVER_IN_PLACE = Integer.MAX_VALUE;

    /** {@code wait}'s default: spin briefly, yield while an answer is awaited, then sleep. */
    public static final String BALANCED = "balanced";
    /** Latency mode: poll busy for a while after every completion. */
    public static final String SPIN = "spin";

    /** {@code dispatcher}'s default: each data path actor runs where the handler it serves runs. */
    public static final String SAME_AS_HANDLER = "same-as-handler";
    /** The data path's own dispatcher, whose threads poll for work before they park. */
    public static final String DATA_PATH_DISPATCHER = "rdma-actors.data-path";

    /**
     * Where a data path actor serving {@code handler} runs: on the handler's dispatcher unless
     * {@code dispatcher} names one, so the messages between the two stay within one pool of
     * threads (a hop from one pool into a fork-join pool wakes one of its threads).
     */
    Props dataPath(ActorRef<?> handler) {
        return Props.empty().withDispatcherFromConfig(dispatcher.equals(SAME_AS_HANDLER)
                ? dispatcherOf(handler) : dispatcher);
    }

    /**
     * The dispatcher a local actor runs on; Pekko's default for anything else. A spawned actor's
     * ref holds its cell; a system or top-level actor's is repointable, and holds a cell only
     * once the actor started (before that, the props it will start with).
     */
    private static String dispatcherOf(ActorRef<?> ref) {
        if (ref != null && Adapter.toClassic(ref) instanceof ActorRefWithCell withCell) {
            Cell cell = withCell.underlying();
            if (cell instanceof ActorCell started) {
                return started.dispatcher().id();
            }
            // neither "as its parent" nor "none given" names a dispatcher: both start on the default
            String named = cell.props().dispatcher();
            if (!named.equals(Deploy$.MODULE$.DispatcherSameAsParent())
                    && !named.equals(Deploy$.MODULE$.NoDispatcherGiven())) {
                return named;
            }
        }
        return Dispatchers.DefaultDispatcherId();
    }

    /** These settings with what {@code options} sets for one connection. */
    public RdmaSettings with(RdmaProtocol.ConnectionOptions options) {
        return new RdmaSettings(fabric, fabricOptions, options.sendQueueDepth().orElse(sendQueueDepth),
                options.receiveQueueDepth().orElse(receiveQueueDepth), bufferSize,
                options.writeQueue().orElse(writeQueue), options.maxMessageSize().orElse(maxMessageSize),
                resolveTimeout, connectTimeout, acceptTimeout, shutdownCloseTimeout, completionPollers, completionSpin,
                completionYield, waitMode, dispatcher, verbsDispatcher,
                options.receiveInPlace().orElse(receiveInPlace), receiveQueue,
                options.receivedBatches() || receivedBatches);
    }

    /** A bad value names its key, so a configuration error says which line to fix. */
    private static void require(boolean valid, String key, Object value, String rule) {
        if (!valid) {
            throw new IllegalArgumentException("rdma-actors." + key + " = " + value + ": must be " + rule);
        }
    }

    public static RdmaSettings from(Config root) {
        Config c = root.getConfig("rdma-actors");
        Map<String, String> options = new HashMap<>();
        Config opts = c.getConfig("fabric-options");
        opts.entrySet().forEach(e -> options.put(e.getKey().replace("\"", ""), opts.getString(e.getKey())));
        return new RdmaSettings(c.getString("fabric"), options, c.getInt("send-queue-depth"),
                c.getInt("receive-queue-depth"), c.getInt("buffer-size"), c.getInt("write-queue"),
                (int) Math.min(Integer.MAX_VALUE, c.getBytes("max-message-size")), c.getDuration("resolve-timeout"),
                c.getDuration("connect-timeout"), c.getDuration("accept-timeout"),
                c.getDuration("shutdown-close-timeout"), c.getInt("completion-pollers"),
                c.getDuration("completion-spin"), c.getDuration("completion-yield"), c.getString("wait"),
                c.getString("dispatcher"),
                c.getString("verbs-dispatcher"), NEVER_IN_PLACE, c.getString("receive-queue"), false);
    }
}
