package io.rdmaactors.examples;

import io.rdmaactors.actors.streams.RdmaStreams;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionException;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.javadsl.Keep;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * An echo server and client on Pekko Streams, as Pekko's Tcp echo is written: the server handles
 * each incoming connection with an identity flow; the client streams numbered messages through
 * its outgoing connection and checks every echo. -s serves one client and exits.
 */
@Command(name = "stream-echo", description = "Pekko Streams echo over RDMA: every message comes back whole, in order.")
public final class StreamEcho implements Callable<Integer> {

    private static final String NAME = "stream-echo";

    @Mixin
    RdmaFlags flags;

    @Option(names = {"-C", "--count"}, defaultValue = "10000", description = "messages (default ${DEFAULT-VALUE})")
    int count;

    @Option(names = {"-S", "--size"}, defaultValue = "64", description = "message bytes, at least 4 (default ${DEFAULT-VALUE})")
    int size;

    @Override
    public Integer call() {
        flags.check("--count", count, 1, Integer.MAX_VALUE);
        flags.check("--size", size, Payload.MIN_SIZE, Program.MAX_SIZE);
        RdmaFlags.Role role = flags.role();
        return Program.run(NAME, flags, Program.bufferFor(size), Duration.ofSeconds(60 + count / 1000),
                result -> Behaviors.setup(ctx -> {
                    if (role == RdmaFlags.Role.CLIENT) {
                        client(ctx.getSystem(), flags.serverAddress(), result);
                    } else {
                        server(ctx.getSystem(), role, result);
                    }
                    return Behaviors.empty();
                }));
    }

    // ------------------------------------------------------------------ the user code: server and client

    private void server(ActorSystem<?> system, RdmaFlags.Role role, Program.Result result) {
        var running = RdmaStreams.get(system).bind(flags.bind())
                .take(role == RdmaFlags.Role.SERVER ? 1 : Long.MAX_VALUE)
                .mapAsync(1, connection -> connection.handleWith(Flow.<ByteString>create()
                        .watchTermination((notUsed, done) -> done), system))
                .toMat(Sink.ignore(), Keep.both())
                .run(system);
        running.first().whenComplete((binding, failure) -> {
            if (failure != null) {
                result.fail(NAME + " server: " + failure.getMessage());
            } else if (role == RdmaFlags.Role.SERVER) {
                Program.announce(NAME, binding.localAddress());
            } else {
                client(system, binding.localAddress(), result);
            }
        });
        running.second().thenRun(() -> result.succeed(NAME + " server: echoed one client's stream until it ended"));
    }

    private void client(ActorSystem<?> system, InetSocketAddress server, Program.Result result) {
        long start = System.nanoTime();
        Source.range(0, count - 1)
                .map(n -> ByteString.fromArrayUnsafe(Payload.of(n, size)))
                .via(RdmaStreams.get(system).outgoingConnection(server))
                .runFold(0, (expected, echo) -> {
                    if (Payload.check(echo, size) != expected) {
                        throw new IllegalStateException("echo " + expected + " came back wrong");
                    }
                    return expected + 1;
                }, system)
                .whenComplete((echoed, failure) -> {
                    if (failure != null) {
                        Throwable cause = failure instanceof CompletionException ? failure.getCause() : failure;
                        result.fail(NAME + " client: " + cause.getMessage());
                    } else {
                        long elapsed = System.nanoTime() - start;
                        result.succeed(String.format("%s client: %d messages of %d bytes echoed, every byte"
                                + " verified%n%s", NAME, echoed, size, Report.throughput(echoed, size, elapsed)));
                    }
                });
    }
}
