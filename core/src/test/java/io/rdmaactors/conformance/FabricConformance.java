package io.rdmaactors.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.rdmaactors.cm.AsyncEvent;
import io.rdmaactors.cm.CmEvent;
import io.rdmaactors.verbs.CompletionQueue;
import io.rdmaactors.verbs.Device;
import io.rdmaactors.verbs.EventChannel;
import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.PostException;
import io.rdmaactors.verbs.QpState;
import io.rdmaactors.verbs.QueuePair;
import io.rdmaactors.verbs.VerbsException;
import io.rdmaactors.verbs.WorkCompletion;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;

/**
 * The base of the provider-independent conformance suite: a fresh fabric per test, and after the
 * test closed what it opened, a ledger with nothing live. A provider runs the suite by extending
 * each topic's class with {@link #openFabric()} returning its fabric.
 */
@Timeout(30)
public abstract class FabricConformance {

    /** The longest any single step may take before the test fails instead of hanging. */
    protected static final Duration STEP = Duration.ofSeconds(5);
    /** How long to watch for something that must not happen. */
    protected static final Duration QUIET = Duration.ofMillis(150);

    protected Fabric fabric;
    private final Deque<AutoCloseable> opened = new ArrayDeque<>();

    protected abstract Fabric openFabric();

    @BeforeEach
    void openFreshFabric() {
        fabric = openFabric();
    }

    /** Closed after the test, last opened first, before the ledger is checked. */
    protected <T extends AutoCloseable> T opened(T resource) {
        opened.push(resource);
        return resource;
    }

    @AfterEach
    void assertNothingLeakedAndClose() throws Exception {
        try {
            while (!opened.isEmpty()) {
                opened.pop().close();
            }
            assertEquals(0, fabric.ledger().total(), () -> "resources left open: " + fabric.ledger().snapshot());
        } finally {
            fabric.close();
        }
    }

    protected Device device() {
        return fabric.devices().get(0);
    }

    /**
     * Whether the fabric carries connections over links between processes (the soft fabric's
     * {@code transport=tcp}): the suite's loopbacks then connect through the CM, as two processes'
     * QPs do, so that their traffic crosses a link.
     */
    protected boolean overLinks() {
        return false;
    }

    /** Two connected QPs on {@link #device()}: by hand, or through the CM {@link #overLinks() over links}. */
    protected Loopback.Builder loopback() {
        Loopback.Builder builder = Loopback.on(device());
        return overLinks() ? builder.throughCm(fabric) : builder;
    }

    /** Waits for the next completion on {@code cq}, failing after {@link #STEP}. */
    protected static WorkCompletion poll(CompletionQueue cq) {
        WorkCompletion[] out = new WorkCompletion[1];
        long deadline = System.nanoTime() + STEP.toNanos();
        while (cq.poll(out) == 0) {
            if (System.nanoTime() > deadline) {
                fail("no completion within " + STEP);
            }
            Thread.onSpinWait();
        }
        return out[0];
    }

    /** Waits for the next completion and asserts it succeeded, with its wrId. */
    protected static WorkCompletion pollSuccess(CompletionQueue cq, long wrId) {
        WorkCompletion wc = poll(cq);
        assertTrue(wc.isSuccess(), () -> "expected success: " + wc);
        assertEquals(wrId, wc.wrId(), () -> "wrong wrId: " + wc);
        return wc;
    }

    protected static List<WorkCompletion> poll(CompletionQueue cq, int count) {
        List<WorkCompletion> all = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            all.add(poll(cq));
        }
        return all;
    }

    protected static void assertNoCompletion(CompletionQueue cq) {
        WorkCompletion[] out = new WorkCompletion[1];
        long deadline = System.nanoTime() + QUIET.toNanos();
        while (System.nanoTime() < deadline) {
            if (cq.poll(out) > 0) {
                fail("unexpected completion " + out[0]);
            }
            Thread.onSpinWait();
        }
    }

    /** Waits until {@code qp} is in {@code state}: a QP may change state just after its completion. */
    protected static void awaitState(QueuePair qp, QpState state) throws InterruptedException {
        long deadline = System.nanoTime() + STEP.toNanos();
        while (qp.state() != state && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertEquals(state, qp.state(), "state of QP " + qp.qpNum());
    }

    /** The next CM event, which must be of {@code type}. */
    protected static <T extends CmEvent> T await(EventChannel channel, Class<T> type) throws Exception {
        CmEvent e = channel.await(STEP);
        assertNotNull(e, () -> "no " + type.getSimpleName() + " within " + STEP);
        return assertInstanceOf(type, e);
    }

    /** Waits for the first async event of {@code device} that matches, skipping others. */
    protected static AsyncEvent awaitAsync(Device device, Predicate<AsyncEvent> wanted, String what)
            throws Exception {
        long deadline = System.nanoTime() + STEP.toNanos();
        List<AsyncEvent> skipped = new ArrayList<>();
        while (System.nanoTime() < deadline) {
            AsyncEvent e = device.asyncEvents().await(Duration.ofMillis(50));
            if (e != null && wanted.test(e)) {
                return e;
            }
            if (e != null) {
                skipped.add(e);
            }
        }
        return fail("no " + what + " async event within " + STEP + "; saw " + skipped);
    }

    /** Collects the async events of {@code device} for {@link #QUIET}. */
    protected static List<AsyncEvent> drainAsync(Device device) throws Exception {
        List<AsyncEvent> events = new ArrayList<>();
        long deadline = System.nanoTime() + QUIET.toNanos();
        while (System.nanoTime() < deadline) {
            AsyncEvent e = device.asyncEvents().await(Duration.ofMillis(20));
            if (e != null) {
                events.add(e);
            }
        }
        return events;
    }

    /**
     * Asserts that a post is refused for {@code reason}: thrown as such, or as the reason of a
     * {@link PostException} naming work request {@code index}.
     */
    protected static <T extends VerbsException> T assertRefused(Class<T> reason, int index, Executable post) {
        try {
            post.execute();
        } catch (PostException e) {
            assertEquals(index, e.failedIndex(), "failed index");
            return assertInstanceOf(reason, e.reason(), "reason of " + e);
        } catch (Throwable t) {
            return assertInstanceOf(reason, t);
        }
        return fail("the post was accepted; expected " + reason.getSimpleName());
    }

    protected static ByteBuffer pattern(int length, int seed) {
        ByteBuffer b = ByteBuffer.allocateDirect(length);
        for (int i = 0; i < length; i++) {
            b.put(i, (byte) (seed + i * 7));
        }
        return b;
    }

    protected static byte[] bytes(ByteBuffer buffer, int offset, int length) {
        byte[] out = new byte[length];
        buffer.get(offset, out);
        return out;
    }

    protected static byte[] patternBytes(int length, int seed) {
        return bytes(pattern(length, seed), 0, length);
    }
}
