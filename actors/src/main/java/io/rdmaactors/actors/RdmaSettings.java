package io.rdmaactors.actors;

import com.typesafe.config.Config;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/** The {@code rdma-actors} section of the configuration (see reference.conf). */
public record RdmaSettings(String fabric, Map<String, String> fabricOptions, int sendQueueDepth,
                           int receiveQueueDepth, int bufferSize, int writeQueue, int maxMessageSize,
                           Duration resolveTimeout, Duration connectTimeout,
                           Duration acceptTimeout, int completionPollers, Duration completionSpin,
                           Duration completionYield, String dispatcher, String verbsDispatcher) {

    public RdmaSettings {
        fabricOptions = Map.copyOf(fabricOptions);
        // a receive buffer holds a rendezvous announcement at least
        if (sendQueueDepth < 1 || receiveQueueDepth < 1 || bufferSize < 32 || writeQueue < 0 || maxMessageSize < 1) {
            throw new IllegalArgumentException("queue depths and max-message-size must be positive, buffer-size at"
                    + " least 32 and write-queue not negative");
        }
        if (completionPollers < 1 || completionSpin.isNegative() || completionYield.isNegative()) {
            throw new IllegalArgumentException("completion-pollers must be positive, completion-spin and"
                    + " completion-yield not negative");
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
                c.getDuration("connect-timeout"), c.getDuration("accept-timeout"), c.getInt("completion-pollers"),
                c.getDuration("completion-spin"), c.getDuration("completion-yield"), c.getString("dispatcher"),
                c.getString("verbs-dispatcher"));
    }
}
