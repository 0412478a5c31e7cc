package io.rdmaactors.testkit.chaos;

import io.rdmaactors.actors.RdmaProtocol;
import io.rdmaactors.actors.RemoteRegion;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.HashSet;
import java.util.Random;
import java.util.Set;
import java.util.function.Supplier;
import java.util.zip.CRC32;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.util.ByteString;

/**
 * One chaos connection slot: connects, keeps a window of Sends (echoed), Writes, Reads and
 * FetchAdds in flight, each with its own token, checks every answer and every byte, and
 * reconnects when the connection ends, until told to stop. Every payload ends in its CRC-32, so
 * an echo or a Read that comes back altered is caught.
 */
final class ChaosClient extends AbstractBehavior<Object> {

    /** Crash this handler, as a bug in a user's actor would. */
    record Crash() {
    }

    /** Close the connection and do not reconnect. */
    record Stop() {
    }

    private record Tick() {
    }

    private record Reconnect() {
    }

    private static final Duration TICK = Duration.ofMillis(50);
    private static final int WINDOW = 8;

    private final ChaosLedger ledger;
    private final ChaosRun.Slot slot;
    private final ActorRef<RdmaProtocol.ManagerCommand> manager;
    private final Supplier<InetSocketAddress> server;
    private final Random random;
    private final TimerScheduler<Object> timers;
    private long attempt;
    private RdmaProtocol.Connected connected;
    private RemoteRegion region;
    /** Tokens of this attempt in flight. */
    private final Set<Long> window = new HashSet<>();
    private boolean suspended;
    private boolean stopping;
    /** Set before a Crash throws: any other stop of this actor is a failure of the chaos client itself. */
    private boolean crashing;
    /** Every attempt this actor made: a crash leaves the late answers of all of them with nobody to hear them. */
    private final Set<Long> attempts = new HashSet<>();
    /** FetchAdd originals of this attempt: each must come once. */
    private final Set<Long> originals = new HashSet<>();

    static Behavior<Object> create(ChaosLedger ledger, ChaosRun.Slot slot, ActorRef<RdmaProtocol.ManagerCommand> manager,
                                   Supplier<InetSocketAddress> server, long seed) {
        return Behaviors.setup(ctx -> Behaviors.withTimers(timers ->
                new ChaosClient(ctx, timers, ledger, slot, manager, server, seed)));
    }

    private ChaosClient(ActorContext<Object> ctx, TimerScheduler<Object> timers, ChaosLedger ledger, ChaosRun.Slot slot,
                        ActorRef<RdmaProtocol.ManagerCommand> manager, Supplier<InetSocketAddress> server, long seed) {
        super(ctx);
        this.timers = timers;
        this.ledger = ledger;
        this.slot = slot;
        this.manager = manager;
        this.server = server;
        this.random = new Random(seed);
        timers.startTimerWithFixedDelay(new Tick(), TICK);
        connect();
    }

    private void connect() {
        attempt = ledger.newAttempt();
        attempts.add(attempt);
        originals.clear();
        region = null;
        window.clear();
        suspended = false;
        ActorRef<RdmaProtocol.ConnectionEvent> self = getContext().getSelf().narrow();
        manager.tell(RdmaProtocol.Connect.to(server.get(), self).withTimeout(Duration.ofSeconds(5)));
    }

    @Override
    public Receive<Object> createReceive() {
        return newReceiveBuilder()
                .onMessage(RdmaProtocol.Connected.class, this::onConnected)
                .onMessage(RdmaProtocol.ConnectFailed.class, f -> ended())
                .onMessage(RdmaProtocol.Disconnected.class, d -> ended())
                .onMessage(RdmaProtocol.Received.class, r -> {
                    verify(r.data());
                    return this;
                })
                .onMessage(RdmaProtocol.Acked.class, a -> answered(a.token(), true))
                .onMessage(RdmaProtocol.ReadCompleted.class, r -> {
                    verify(r.data());
                    return answered(r.token(), true);
                })
                .onMessage(RdmaProtocol.AtomicCompleted.class, a -> {
                    if (!originals.add(a.original())) {
                        ledger.corrupt(); // two FetchAdds saw the same value
                    }
                    return answered(a.token(), true);
                })
                .onMessage(RdmaProtocol.CommandFailed.class, f -> answered(tokenOf(f.command()), false))
                .onMessage(RdmaProtocol.WritingSuspended.class, s -> {
                    suspended = true;
                    if (connected != null) {
                        connected.connection().tell(new RdmaProtocol.ResumeWriting());
                    }
                    return this;
                })
                .onMessage(RdmaProtocol.WritingResumed.class, r -> {
                    suspended = false;
                    return fill();
                })
                .onMessage(Tick.class, t -> fill())
                .onMessage(Reconnect.class, r -> {
                    if (stopping) {
                        slot.done(); // stopped between two attempts
                    } else {
                        connect();
                    }
                    return this;
                })
                .onMessage(Crash.class, c -> {
                    crashing = true;
                    ledger.crash(attempts);
                    slot.crashed();
                    throw new IllegalStateException("chaos: a handler crashes");
                })
                .onMessage(Stop.class, s -> {
                    stopping = true;
                    ledger.reached(attempt, connected != null ? "closing" : "stopped while connecting");
                    if (connected != null) {
                        connected.connection().tell(new RdmaProtocol.Close());
                    }
                    return this;
                })
                .onAnyMessage(other -> this)
                .onSignal(PostStop.class, s -> {
                    if (!crashing) {
                        // a bug here, not in the library: say so rather than leave the slot hanging
                        ledger.clientFailed();
                        ledger.crash(attempts);
                        slot.crashed();
                    }
                    return this;
                })
                .build();
    }

    private Behavior<Object> onConnected(RdmaProtocol.Connected c) {
        ledger.reached(attempt, "connected");
        connected = c;
        slot.connected(c);
        if (c.privateData().length >= RemoteRegion.ENCODED_BYTES) {
            region = RemoteRegion.fromBytes(c.privateData());
        }
        if (stopping) {
            c.connection().tell(new RdmaProtocol.Close());
            return this;
        }
        return fill();
    }

    private Behavior<Object> ended() {
        ledger.ended(attempt);
        connected = null;
        slot.connected(null);
        if (stopping) {
            slot.done();
            return this;
        }
        timers.startSingleTimer(new Reconnect(), Duration.ofMillis(10 + random.nextInt(90)));
        return this;
    }

    private Behavior<Object> answered(Object token, boolean success) {
        if (token instanceof Long t) {
            ledger.answer(t, success);
            window.remove(t);
        }
        return success ? fill() : this; // after a refusal, the next tick tries again
    }

    /** A data command's token; null for a Close or ResumeWriting refused by a connection that ended. */
    private static Object tokenOf(Object command) {
        return command instanceof RdmaProtocol.DataCommand d ? d.ack() : null;
    }

    /** Tops the window up with random requests. */
    private Behavior<Object> fill() {
        while (connected != null && !stopping && !suspended && window.size() < WINDOW) {
            long token = ledger.issue(attempt);
            int kind = region == null ? 0 : random.nextInt(4);
            RdmaProtocol.ConnectionCommand command = switch (kind) {
                case 1 -> RdmaProtocol.Write.of(region, ChaosAgent.SLOT, payload(ChaosAgent.SLOT_BYTES), token);
                case 2 -> RdmaProtocol.Read.of(region, ChaosAgent.SLOT, ChaosAgent.SLOT_BYTES, token);
                case 3 -> new RdmaProtocol.FetchAdd(region, ChaosAgent.COUNTER, 1, token);
                // now and then a Send larger than a buffer, which goes by rendezvous
                default -> RdmaProtocol.Send.of(payload(random.nextInt(50) == 0 ? 64 << 10 : 16 + random.nextInt(2048)),
                        token);
            };
            window.add(token);
            connected.connection().tell(command);
        }
        return this;
    }

    private ByteString payload(int size) {
        byte[] bytes = new byte[size];
        random.nextBytes(bytes);
        CRC32 crc = new CRC32();
        crc.update(bytes, 0, size - 4);
        ByteBuffer.wrap(bytes).putInt(size - 4, (int) crc.getValue());
        return ByteString.fromArrayUnsafe(bytes);
    }

    /** An echo or a Read: its CRC must hold (a slot nobody wrote yet is all zeros). */
    private void verify(ByteString data) {
        byte[] bytes = data.toArray();
        if (bytes.length < 4) {
            ledger.corrupt();
            return;
        }
        boolean zeros = true;
        for (byte b : bytes) {
            zeros &= b == 0;
        }
        CRC32 crc = new CRC32();
        crc.update(bytes, 0, bytes.length - 4);
        if (!zeros && ByteBuffer.wrap(bytes).getInt(bytes.length - 4) != (int) crc.getValue()) {
            ledger.corrupt();
        } else {
            ledger.bytesVerified.addAndGet(bytes.length);
        }
    }
}
