package io.rdmaactors.cm;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A dedicated, named daemon thread that blocks on one {@link EventSource} and hands every event to
 * a sink (typically {@code ActorRef::tell}). It runs no user code but the sink, and swallows no
 * error: when the source fails, the failure is handed to the sink as an event and the pump stops.
 */
public final class EventPump<E> implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(EventPump.class);
    /** Long enough to be no periodic wake-up: close() wakes the source to stop the pump. */
    private static final Duration WAIT = Duration.ofDays(1);
    /** How often close() repeats its wake-up while the thread has not ended. */
    private static final long JOIN_SLICE_MS = 100;

    /** Returns from waits of every pump in this JVM, events or not: an idle process makes none. */
    private static final LongAdder WAKE_UPS = new LongAdder();

    private final EventSource<E> source;
    private final Consumer<? super E> sink;
    private final Function<Throwable, ? extends E> failure;
    private final Thread thread;
    private volatile boolean running = true;

    private EventPump(String name, EventSource<E> source, Consumer<? super E> sink,
                      Function<Throwable, ? extends E> failure) {
        this.source = Objects.requireNonNull(source, "source");
        this.sink = Objects.requireNonNull(sink, "sink");
        this.failure = Objects.requireNonNull(failure, "failure");
        this.thread = new Thread(this::run, Objects.requireNonNull(name, "name"));
        this.thread.setDaemon(true);
    }

    /**
     * Starts a pump on its own thread.
     *
     * @param failure turns a failure of the source into the event handed to the sink
     */
    public static <E> EventPump<E> start(String name, EventSource<E> source, Consumer<? super E> sink,
                                         Function<Throwable, ? extends E> failure) {
        EventPump<E> pump = new EventPump<>(name, source, sink, failure);
        pump.thread.start();
        return pump;
    }

    /** How often the pumps of this JVM returned from a wait; for tests and diagnostics. */
    public static long wakeUps() {
        return WAKE_UPS.sum();
    }

    public String name() {
        return thread.getName();
    }

    public boolean isRunning() {
        return thread.isAlive();
    }

    private void run() {
        while (running) {
            E event;
            try {
                event = source.await(WAIT);
                WAKE_UPS.increment();
            } catch (InterruptedException e) {
                if (running) {
                    sink.accept(failure.apply(e));
                }
                return;
            } catch (Exception | Error e) {
                if (running) {
                    log.debug("event source of {} failed", name(), e);
                    sink.accept(failure.apply(e));
                }
                return;
            }
            if (event != null) {
                sink.accept(event); // taken from the source, even as a close began: nobody else will see it
            }
        }
    }

    /**
     * Stops the pump and waits for its thread to end. An event it took from the source, even as
     * this began, is delivered first: it is in no queue any more (so a stopping CM event actor
     * still refuses a connect request its pump took).
     */
    @Override
    public void close() {
        running = false;
        if (Thread.currentThread() == thread) {
            return;
        }
        source.wakeup();
        boolean interrupted = false;
        while (thread.isAlive()) {
            try {
                thread.join(JOIN_SLICE_MS);
            } catch (InterruptedException e) {
                interrupted = true;
            }
            if (thread.isAlive()) {
                source.wakeup();
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
