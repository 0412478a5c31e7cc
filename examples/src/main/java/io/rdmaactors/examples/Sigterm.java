package io.rdmaactors.examples;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * SIGTERM as a request to finish, for a long-running server. The JVM answers SIGTERM by running its
 * shutdown hooks and then exits 143; a server that drains on SIGTERM ends with the exit status of
 * its command instead: its hook waits for that status and halts with it.
 */
final class Sigterm {

    /** What the command line returned, once it has. */
    private static final CompletableFuture<Integer> EXIT_STATUS = new CompletableFuture<>();
    /** Beyond the drain itself: reporting, and the actor system's shutdown. */
    private static final Duration MARGIN = Duration.ofSeconds(20);

    private Sigterm() {
    }

    /** On SIGTERM, runs {@code drain} and ends the process with the command's status, after {@code drainBound} at most. */
    static void onSigterm(Runnable drain, Duration drainBound) {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            drain.run();
            int status = EXIT_STATUS.completeOnTimeout(1, drainBound.plus(MARGIN).toMillis(), TimeUnit.MILLISECONDS)
                    .join();
            System.out.flush();
            System.err.flush();
            Runtime.getRuntime().halt(status);
        }, "sigterm"));
    }

    /** Exits with {@code status}; during a drain System.exit blocks, and the hook exits with this status instead. */
    static void exit(int status) {
        EXIT_STATUS.complete(status);
        System.exit(status);
    }
}
