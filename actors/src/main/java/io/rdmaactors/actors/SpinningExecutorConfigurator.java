package io.rdmaactors.actors;

import com.typesafe.config.Config;
import java.util.concurrent.ThreadFactory;
import org.apache.pekko.dispatch.DispatcherPrerequisites;
import org.apache.pekko.dispatch.ExecutorServiceConfigurator;
import org.apache.pekko.dispatch.ExecutorServiceFactory;
import org.apache.pekko.dispatch.MonitorableThreadFactory;

/**
 * Makes a dispatcher run on a {@link SpinningExecutor}: {@code executor =
 * "io.rdmaactors.actors.SpinningExecutorConfigurator"}, with {@code spinning-executor.threads}
 * (0: one per core), {@code spin} and {@code spinners} (0: one per two cores) beside it.
 */
public final class SpinningExecutorConfigurator extends ExecutorServiceConfigurator {

    private final Config config;

    public SpinningExecutorConfigurator(Config config, DispatcherPrerequisites prerequisites) {
        super(config, prerequisites);
        this.config = config.getConfig("spinning-executor");
    }

    @Override
    public ExecutorServiceFactory createExecutorServiceFactory(String id, ThreadFactory threadFactory) {
        int cores = Runtime.getRuntime().availableProcessors();
        int threads = config.getInt("threads");
        int spinners = config.getInt("spinners");
        // named as Pekko names a thread pool's threads: system-dispatcher-n
        ThreadFactory named = threadFactory instanceof MonitorableThreadFactory m ? m.withName(m.name() + "-" + id)
                : threadFactory;
        return () -> new SpinningExecutor(threads > 0 ? threads : cores, config.getDuration("spin"),
                spinners > 0 ? spinners : Math.max(1, cores / 2), named);
    }
}
