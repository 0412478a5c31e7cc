package io.rdmaactors.examples;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValueFactory;
import io.rdmaactors.actors.Rdma;
import io.rdmaactors.actors.RdmaProtocol;
import io.rdmaactors.verbs.Fabric;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.slf4j.LoggerFactory;

/**
 * Runs one program: its guardian in a fresh actor system on the chosen fabric, until one of its
 * actors reports the result line or a failed verification; then the actor system is shut down.
 */
final class Program {

    /** How long a client waits for Connected. */
    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);

    private static final Duration SHUTDOWN = Duration.ofSeconds(10);
    /** How long the manager may take to open its fabric. */
    private static final Duration FABRIC_OPEN = Duration.ofSeconds(5);

    private Program() {
    }

    /** Where a program's actors report how it ended; the first report wins, from any thread. */
    static final class Result {
        private final CompletableFuture<String> line = new CompletableFuture<>();

        void succeed(String resultLine) {
            line.complete(resultLine);
        }

        void fail(String why) {
            line.completeExceptionally(new IllegalStateException(why));
        }

        /** Fails the program and stops the reporting actor: the behaviour for events no program expects. */
        <T> Behavior<T> failed(String why) {
            fail(why);
            return Behaviors.stopped();
        }
    }

    /**
     * Runs {@code guardian} with {@code config} over rdma-actors' defaults; prints the result line
     * and answers 0, or prints why it failed and answers 1.
     */
    static <T> int run(String name, FabricOptions options, String config, Duration limit,
                       Function<Result, Behavior<T>> guardian) {
        Config merged = ConfigFactory.parseString(config)
                .withValue("rdma-actors.fabric", ConfigValueFactory.fromAnyRef(options.fabric))
                .withFallback(ConfigFactory.load());
        // SLF4J set up before Pekko's threads log, or it replays their first calls with a warning
        LoggerFactory.getILoggerFactory();
        Result result = new Result();
        ActorSystem<T> system = ActorSystem.create(guardian.apply(result), name, merged);
        system.getWhenTerminated().thenRun(() -> result.fail("the actor system stopped before the program ended"));
        // a manager that could not open its fabric stops without a word: ask it, rather than wait for the limit
        AskPattern.<RdmaProtocol.ManagerCommand, Fabric>ask(Rdma.get(system).manager(), RdmaProtocol.GetFabric::new,
                FABRIC_OPEN, system.scheduler()).whenComplete((fabric, failure) -> {
                    if (failure != null) {
                        result.fail("rdma-actors did not open the " + options.fabric + " fabric (see the log)");
                    }
                });
        try {
            System.out.println(result.line.get(limit.toMillis(), TimeUnit.MILLISECONDS));
            return 0;
        } catch (ExecutionException e) {
            System.err.println(name + " failed: " + e.getCause().getMessage());
            return 1;
        } catch (TimeoutException e) {
            System.err.println(name + " failed: no result within " + limit);
            return 1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 1;
        } finally {
            system.terminate();
            system.getWhenTerminated().toCompletableFuture().completeOnTimeout(null, SHUTDOWN.toMillis(),
                    TimeUnit.MILLISECONDS).join();
        }
    }

    /** Configuration whose buffers carry messages of {@code size} bytes. */
    static String bufferFor(int size) {
        return "rdma-actors.buffer-size = " + Math.max(4096, size) + "\n";
    }
}
