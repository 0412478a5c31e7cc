package io.rdmaactors.jna;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import io.rdmaactors.cm.CmEvent;
import io.rdmaactors.conformance.Loopback;
import io.rdmaactors.jna.binding.LibC;
import io.rdmaactors.jna.binding.RdmaEventChannel;
import io.rdmaactors.verbs.Access;
import io.rdmaactors.verbs.CmId;
import io.rdmaactors.verbs.CompletionChannel;
import io.rdmaactors.verbs.CompletionQueue;
import io.rdmaactors.verbs.ConnectionParameters;
import io.rdmaactors.verbs.Device;
import io.rdmaactors.verbs.EventChannel;
import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.FabricUnavailableException;
import io.rdmaactors.verbs.InvalidRequestException;
import io.rdmaactors.verbs.InvalidStateException;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.PortSpace;
import io.rdmaactors.verbs.PostException;
import io.rdmaactors.verbs.ProtectionDomain;
import io.rdmaactors.verbs.QpAttributes;
import io.rdmaactors.verbs.QpInitAttributes;
import io.rdmaactors.verbs.QueuePair;
import io.rdmaactors.verbs.ReceiveWorkRequest;
import io.rdmaactors.verbs.ResourceClosedException;
import io.rdmaactors.verbs.SendWorkRequest;
import io.rdmaactors.verbs.VerbsException;
import io.rdmaactors.verbs.WorkCompletion;
import java.io.File;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Misuse of the jna provider ends in a typed {@link VerbsException}, never in a JVM crash: use
 * after close of every resource kind, double close, posts to a QP that is not ready, a buffer that
 * is not direct, work requests naming a deregistered region, and CM ids destroyed while events for
 * them are queued on their channel. The device cases skip without an RDMA device (run them with
 * {@code native/run-in-softroce.sh --select-class io.rdmaactors.jna.JnaSafetyTest}); the missing
 * library case runs everywhere, in a child JVM told a librdmacm name that does not exist.
 */
class JnaSafetyTest {

    private static final Duration STEP = Duration.ofSeconds(10);
    /** What the error text names, from the README: the packages that bring rdma-core. */
    private static final String PACKAGES = "librdmacm1 libibverbs1 ibverbs-providers";
    private static final String MISSING_RDMACM = "rdmacm-not-installed-here";

    private Fabric fabric;

    private Device device() {
        if (fabric == null) {
            fabric = JnaFabrics.openOrSkip();
        }
        return fabric.devices().get(0);
    }

    @AfterEach
    void close() {
        if (fabric != null) {
            fabric.close();
        }
    }

    // ---------------------------------------------------------------- use after close, double close

    @Test
    void everyResourceRefusesUseAfterCloseAndClosesTwiceQuietly() {
        Device device = device();
        ProtectionDomain pd = device.allocateProtectionDomain();
        CompletionChannel cc = device.createCompletionChannel();
        CompletionQueue cq = device.createCompletionQueue(16, cc);
        QueuePair qp = pd.createQueuePair(QpInitAttributes.rc(cq, 4, 4));
        ByteBuffer buffer = ByteBuffer.allocateDirect(256);
        MemoryRegion mr = pd.register(buffer);
        WorkCompletion[] wc = new WorkCompletion[4];

        qp.close();
        qp.close();
        assertClosed(qp::state);
        assertClosed(qp::query);
        assertClosed(() -> qp.modify(QpAttributes.init(Loopback.PORT, Set.of(Access.LOCAL_WRITE))));
        assertClosed(() -> qp.postSend(SendWorkRequest.send(1, mr.sge(0, 64))));
        assertClosed(() -> qp.postReceive(ReceiveWorkRequest.of(2, mr.sge(0, 64))));

        mr.close();
        mr.close();
        assertClosed(mr::buffer);

        cq.close();
        cq.close();
        assertClosed(() -> cq.poll(wc));
        assertClosed(() -> cq.requestNotify(false));
        assertClosed(() -> cq.ackEvents(0));
        cc.close();
        cc.close();
        assertClosed(() -> cc.await(Duration.ofMillis(10)));

        CompletionQueue other = device.createCompletionQueue(4, null);
        pd.close();
        pd.close();
        assertClosed(() -> pd.register(ByteBuffer.allocateDirect(64)));
        assertClosed(() -> pd.createQueuePair(QpInitAttributes.rc(other, 1, 1)));
        assertClosed(() -> pd.createSharedReceiveQueue(4, 1));
        other.close();
        assertEquals(0, fabric.ledger().total(), fabric.ledger().toString());
    }

    @Test
    void cmIdAndEventChannelRefuseUseAfterCloseAndCloseTwiceQuietly() throws Exception {
        InetAddress self = localAddress();
        EventChannel ch = fabric().createEventChannel();
        CmId id = fabric.createCmId(ch, PortSpace.TCP);
        id.bind(new InetSocketAddress(self, 0));
        id.close();
        id.close();
        assertClosed(() -> id.bind(new InetSocketAddress(self, 0)));
        assertClosed(() -> id.listen(1));
        assertClosed(() -> id.resolveAddress(null, new InetSocketAddress(self, 7471), STEP));
        assertClosed(() -> id.resolveRoute(STEP));
        assertClosed(id::localAddress);
        assertClosed(id::device);
        assertClosed(id::disconnect);
        assertClosed(() -> id.connect(ConnectionParameters.of(new byte[0])));
        assertClosed(() -> id.accept(ConnectionParameters.of(new byte[0])));
        assertClosed(() -> id.reject(null));
        assertNull(ch.cmId(id.handle()), "a closed id is gone from its channel");

        ch.close();
        ch.close();
        assertClosed(() -> ch.await(Duration.ofMillis(10)));
        assertClosed(() -> fabric.createCmId(ch, PortSpace.TCP));
        assertEquals(0, fabric.ledger().total(), fabric.ledger().toString());
    }

    @Test
    void closingAnEventChannelStopsAWaitOnItWithATypedError() throws Exception {
        EventChannel ch = fabric().createEventChannel();
        CompletableFuture<CmEvent> waiting = CompletableFuture.supplyAsync(() -> {
            try {
                return ch.await(Duration.ofSeconds(60));
            } catch (VerbsException e) {
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        Thread.sleep(500); // let it block in poll()
        ch.close();
        try {
            CmEvent e = waiting.get(STEP.toSeconds(), TimeUnit.SECONDS);
            assertNull(e, "a wait on a channel closed under it ends without an event");
        } catch (java.util.concurrent.ExecutionException e) {
            assertInstanceOf(ResourceClosedException.class, e.getCause());
        }
        assertEquals(0, fabric.ledger().total(), fabric.ledger().toString());
    }

    @Test
    void resourcesOfAClosedFabricRefuseUse() {
        Device device = device();
        ProtectionDomain pd = device.allocateProtectionDomain();
        CompletionQueue cq = device.createCompletionQueue(16, null);
        QueuePair qp = pd.createQueuePair(QpInitAttributes.rc(cq, 4, 4));
        MemoryRegion mr = pd.register(ByteBuffer.allocateDirect(64));
        EventChannel ch = fabric.createEventChannel();
        CmId id = fabric.createCmId(ch, PortSpace.TCP);
        fabric.close(); // forced teardown of everything still open
        fabric.close();
        assertEquals(0, fabric.ledger().total(), fabric.ledger().toString());
        assertClosed(() -> qp.postSend(SendWorkRequest.send(1, mr.sge())));
        assertClosed(() -> cq.poll(new WorkCompletion[1]));
        assertClosed(mr::buffer);
        assertClosed(() -> pd.register(ByteBuffer.allocateDirect(64)));
        assertClosed(() -> id.listen(1));
        assertClosed(() -> ch.await(Duration.ofMillis(10)));
        assertClosed(fabric::devices);
        assertClosed(fabric::createEventChannel);
        // closing what the fabric already freed is a no-op
        qp.close();
        mr.close();
        cq.close();
        pd.close();
        id.close();
        ch.close();
        assertEquals(0, fabric.ledger().total(), fabric.ledger().toString());
    }

    // ---------------------------------------------------------------- posts the QP cannot take

    @Test
    void postsToAQpInResetOrInitAreRefusedWithAStateError() {
        Device device = device();
        try (ProtectionDomain pd = device.allocateProtectionDomain();
             CompletionQueue cq = device.createCompletionQueue(16, null);
             QueuePair qp = pd.createQueuePair(QpInitAttributes.rc(cq, 4, 4));
             MemoryRegion mr = pd.register(ByteBuffer.allocateDirect(64))) {
            assertPostRefused(() -> qp.postSend(SendWorkRequest.send(1, mr.sge())));
            assertPostRefused(() -> qp.postReceive(ReceiveWorkRequest.of(2, mr.sge())));
            assertPostRefused(() -> qp.postSend(SendWorkRequest.send(3, mr.sge()),
                    SendWorkRequest.write(4, mr.address(), mr.rkey(), mr.sge())));
            qp.modify(QpAttributes.init(Loopback.PORT, Set.of(Access.LOCAL_WRITE)));
            assertPostRefused(() -> qp.postSend(SendWorkRequest.send(5, mr.sge())));
            assertPostRefused(() -> qp.postSend(SendWorkRequest.read(6, mr.address(), mr.rkey(), mr.sge())));
            assertNoCompletion(cq);
        }
        assertEquals(0, fabric.ledger().total(), fabric.ledger().toString());
    }

    @Test
    void aBufferThatIsNotDirectIsRefused() {
        try (ProtectionDomain pd = device().allocateProtectionDomain()) {
            assertThrows(InvalidRequestException.class, () -> pd.register(ByteBuffer.allocate(64)));
            assertThrows(InvalidRequestException.class,
                    () -> pd.register(ByteBuffer.wrap(new byte[64]), EnumSet.allOf(Access.class)));
        }
        assertEquals(0, fabric.ledger().total(), fabric.ledger().toString());
    }

    // ---------------------------------------------------------------- deregistered regions

    @Test
    void aSendFromADeregisteredRegionFailsAtPostOrCompletesInError() {
        try (Loopback loop = Loopback.on(device()).open()) {
            MemoryRegion receive = loop.b.register(64);
            loop.b.qp.postReceive(ReceiveWorkRequest.of(1, receive.sge()));
            MemoryRegion gone = loop.a.pd.register(ByteBuffer.allocateDirect(64));
            gone.close();
            expectFailure(loop.a.cq, 10, () -> loop.a.qp.postSend(SendWorkRequest.send(10, gone.sge())));
        }
        assertEquals(0, fabric.ledger().total(), fabric.ledger().toString());
    }

    @Test
    void aReceiveIntoADeregisteredRegionCompletesInError() {
        try (Loopback loop = Loopback.on(device()).open()) {
            MemoryRegion gone = loop.b.pd.register(ByteBuffer.allocateDirect(64));
            gone.close();
            boolean posted = false;
            try {
                loop.b.qp.postReceive(ReceiveWorkRequest.of(1, gone.sge()));
                posted = true;
            } catch (PostException e) {
                System.out.println("receive naming a deregistered region refused at post: " + e);
            }
            if (posted) {
                MemoryRegion send = loop.a.register(64);
                send.buffer().put(0, "lost".getBytes(StandardCharsets.US_ASCII));
                loop.a.qp.postSend(SendWorkRequest.send(20, send.sge()));
                WorkCompletion recv = completion(loop.b.cq, 1);
                assertFalse(recv.isSuccess(), "receive into a deregistered region: " + recv);
                WorkCompletion sent = completion(loop.a.cq, 20);
                System.out.println("receive into a deregistered region: " + recv.status() + ", sender: "
                        + sent.status());
            }
        }
        assertEquals(0, fabric.ledger().total(), fabric.ledger().toString());
    }

    @Test
    void rdmaToADeregisteredRemoteRegionFailsWithAnErrorCompletion() {
        try (Loopback loop = Loopback.on(device()).open()) {
            MemoryRegion local = loop.a.register(64);
            MemoryRegion remote = loop.b.pd.register(ByteBuffer.allocateDirect(64), EnumSet.allOf(Access.class));
            long address = remote.address();
            int rkey = remote.rkey();
            remote.close();
            expectFailure(loop.a.cq, 30,
                    () -> loop.a.qp.postSend(SendWorkRequest.write(30, address, rkey, local.sge())));
        }
        assertEquals(0, fabric.ledger().total(), fabric.ledger().toString());
    }

    // ---------------------------------------------------------------- CM ids with events pending

    /**
     * A listener destroyed with a CONNECT_REQUEST queued unread on its channel, then the client
     * destroyed with its answer (REJECTED or UNREACHABLE) queued unread on its own: reading both
     * channels afterwards yields no event of a destroyed id, and nothing leaks.
     */
    @Test
    void idsDestroyedWithTheirEventsUnreadLeaveTheirChannelsUsable() throws Exception {
        InetAddress self = localAddress();
        EventChannel serverEvents = fabric().createEventChannel();
        EventChannel clientEvents = fabric.createEventChannel();
        CmId listener = fabric.createCmId(serverEvents, PortSpace.TCP);
        listener.bind(new InetSocketAddress(self, 0));
        listener.listen(4);
        CmId client = fabric.createCmId(clientEvents, PortSpace.TCP);
        Loopback.Side side = Loopback.activeSide(client, listener.localAddress());
        client.connect(ConnectionParameters.of("unread".getBytes(StandardCharsets.US_ASCII)));
        assertTrue(awaitPending(serverEvents), "the CONNECT_REQUEST waits on the listener's channel, unread");
        long listenerHandle = listener.handle();
        listener.close();
        List<CmEvent> server = drain(serverEvents, Duration.ofSeconds(2));
        System.out.println("server channel after its listener was destroyed: " + server);
        for (CmEvent e : server) {
            // an event that did get through is typed, and its id, if any, is one we can close
            if (e instanceof CmEvent.ConnectRequest r) {
                assertFalse(r.listenId() == listenerHandle && serverEvents.cmId(r.id()) == null, e.toString());
                serverEvents.cmId(r.id()).close();
            }
        }
        // the client's answer (REJECTED, UNREACHABLE) waits, unread
        System.out.println("client's answer pending before its id is destroyed: " + awaitPending(clientEvents));
        side.close(); // the QP, the id, then the CQ and PD
        List<CmEvent> client2 = drain(clientEvents, Duration.ofSeconds(2));
        System.out.println("client channel after its id was destroyed: " + client2);
        serverEvents.close();
        clientEvents.close();
        assertEquals(0, fabric.ledger().total(), fabric.ledger().toString());
    }

    /**
     * Both ends of an established connection and the listener on one channel; a disconnect queues
     * DISCONNECTED (and later TIMEWAIT_EXIT) for both ids, which are destroyed before anything
     * is read. Reading the channel then is safe and nothing leaks.
     */
    @Test
    void connectedIdsDestroyedWithDisconnectEventsUnreadLeaveTheChannelUsable() throws Exception {
        InetAddress self = localAddress();
        EventChannel ch = fabric().createEventChannel();
        CmId listener = fabric.createCmId(ch, PortSpace.TCP);
        listener.bind(new InetSocketAddress(self, 0));
        listener.listen(4);
        CmId client = fabric.createCmId(ch, PortSpace.TCP);
        Loopback.Side a = Loopback.activeSide(client, listener.localAddress());
        client.connect(ConnectionParameters.of(new byte[0]));
        CmEvent.ConnectRequest request = assertInstanceOf(CmEvent.ConnectRequest.class, next(ch));
        CmId agent = ch.cmId(request.id());
        assertNotNull(agent);
        Loopback.Side b = Loopback.passiveSide(agent);
        agent.accept(ConnectionParameters.of(new byte[0]));
        int established = 0;
        while (established < 2) {
            if (next(ch) instanceof CmEvent.Established) {
                established++;
            }
        }
        client.disconnect();
        assertTrue(awaitPending(ch), "DISCONNECTED waits on the channel, unread");
        Thread.sleep(1000); // and the other side's too
        a.close();
        b.close();
        listener.close();
        List<CmEvent> left = drain(ch, Duration.ofSeconds(2));
        System.out.println("shared channel after every id was destroyed: " + left);
        ch.close();
        assertEquals(0, fabric.ledger().total(), fabric.ledger().toString());
    }

    // ---------------------------------------------------------------- missing librdmacm

    /**
     * Without librdmacm (simulated: a child JVM told a library name that does not exist) opening
     * the jna fabric throws FabricUnavailableException naming the Debian packages, each time, and
     * the soft fabric works in that JVM. Runs on every machine.
     */
    @Test
    void missingLibrdmacmIsOneTypedErrorAndTheSoftFabricStillWorks() throws Exception {
        List<String> command = new ArrayList<>(List.of(javaBinary(),
                "-Drdma-actors.jna.rdmacm=" + MISSING_RDMACM, "-cp", childClassPath(),
                MissingLibraryProbe.class.getName()));
        Process child = new ProcessBuilder(command).redirectErrorStream(true).start();
        child.getOutputStream().close();
        CompletableFuture<String> output = CompletableFuture.supplyAsync(() -> {
            try {
                return new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        if (!child.waitFor(180, TimeUnit.SECONDS)) {
            child.destroyForcibly();
            fail("the child JVM did not end within 180 s: " + output.getNow("(no output)"));
        }
        String out = output.get(STEP.toSeconds(), TimeUnit.SECONDS);
        System.out.println("child JVM:\n" + out);
        assertEquals(0, child.exitValue(), out);
        assertTrue(out.contains("FIRST FabricUnavailableException"), out);
        assertTrue(out.contains("SECOND FabricUnavailableException"), out);
        assertTrue(out.contains(PACKAGES), out);
        // libibverbs loads first: on a host without rdma-core that is the library the message names
        assertTrue(out.contains(MISSING_RDMACM) || out.contains("library 'ibverbs'"),
                "the message names the library that did not load: " + out);
        assertTrue(out.contains("SOFT OK"), out);
    }

    /** The child JVM of the missing-library case; prints what it saw, exits 0 when all held. */
    static final class MissingLibraryProbe {
        public static void main(String[] args) {
            int status = 0;
            for (String attempt : List.of("FIRST", "SECOND")) {
                try (Fabric f = Fabric.open("jna")) {
                    System.out.println(attempt + " the jna fabric opened: " + f);
                    status = 1;
                } catch (FabricUnavailableException e) {
                    System.out.println(attempt + " FabricUnavailableException: " + e.getMessage());
                } catch (Throwable t) { // anything else, a LinkageError included, fails the case
                    System.out.println(attempt + " unexpected: " + t);
                    t.printStackTrace(System.out);
                    status = 1;
                }
            }
            try (Fabric soft = Fabric.open("soft")) {
                Device device = soft.devices().get(0);
                try (ProtectionDomain pd = device.allocateProtectionDomain();
                     CompletionQueue cq = device.createCompletionQueue(16, null);
                     QueuePair qp = pd.createQueuePair(QpInitAttributes.rc(cq, 4, 4));
                     MemoryRegion mr = pd.register(ByteBuffer.allocateDirect(64))) {
                    qp.modify(QpAttributes.init(1, Set.of(Access.LOCAL_WRITE)));
                    qp.postReceive(ReceiveWorkRequest.of(1, mr.sge()));
                }
                if (soft.ledger().total() != 0) {
                    throw new IllegalStateException("soft fabric leaked: " + soft.ledger());
                }
                System.out.println("SOFT OK on " + device.name());
            } catch (Throwable t) {
                System.out.println("soft fabric failed: " + t);
                t.printStackTrace(System.out);
                status = 1;
            }
            System.exit(status);
        }
    }

    // ---------------------------------------------------------------- helpers

    private Fabric fabric() {
        device();
        return fabric;
    }

    private static void assertClosed(Executable call) {
        assertThrows(ResourceClosedException.class, call);
    }

    /** Refused before anything reaches the wire: a state error, index 0. */
    private static void assertPostRefused(Executable post) {
        PostException e = assertThrows(PostException.class, post);
        assertInstanceOf(InvalidStateException.class, e.reason(), e.toString());
        assertEquals(0, e.failedIndex());
    }

    private static void assertNoCompletion(CompletionQueue cq) {
        WorkCompletion[] wc = new WorkCompletion[4];
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300);
        while (System.nanoTime() < until) {
            assertEquals(0, cq.poll(wc), "no completion for a refused post");
        }
    }

    /** A post the provider refuses with a typed error, or one that completes with an error status. */
    private static void expectFailure(CompletionQueue cq, long wrId, Executable post) {
        try {
            post.execute();
        } catch (VerbsException e) {
            System.out.println("refused at post: " + e);
            return;
        } catch (Throwable t) {
            throw new AssertionError("not a typed error: " + t, t);
        }
        WorkCompletion wc = completion(cq, wrId);
        assertFalse(wc.isSuccess(), wc.toString());
        System.out.println("completed in error: " + wc.status() + " (vendor " + wc.vendorErr() + ")");
    }

    private static WorkCompletion completion(CompletionQueue cq, long wrId) {
        WorkCompletion[] wc = new WorkCompletion[8];
        long deadline = System.nanoTime() + STEP.toNanos() * 3;
        while (System.nanoTime() < deadline) {
            int n = cq.poll(wc);
            for (int i = 0; i < n; i++) {
                if (wc[i].wrId() == wrId) {
                    return wc[i];
                }
            }
        }
        throw new AssertionError("no completion for " + wrId);
    }

    /**
     * Whether the channel's fd becomes readable (an event waits in the kernel) within 20 s; polls
     * the fd without reading it, so the event stays queued.
     */
    private static boolean awaitPending(EventChannel ch) {
        JnaEventChannel channel = (JnaEventChannel) ch;
        int fd = new Pointer(channel.pointer).getInt(RdmaEventChannel.FD);
        try (Memory pollFd = new Memory(8)) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (System.nanoTime() < deadline) {
                pollFd.setInt(0, fd);
                pollFd.setShort(4, LibC.POLLIN);
                pollFd.setShort(6, (short) 0);
                if (LibC.poll(Pointer.nativeValue(pollFd), 1, 100) > 0 && (pollFd.getShort(6) & LibC.POLLIN) != 0) {
                    return true;
                }
            }
        }
        return false;
    }

    private static CmEvent next(EventChannel ch) throws Exception {
        CmEvent e = ch.await(STEP);
        assertNotNull(e, "no CM event in " + STEP);
        return e;
    }

    /** Everything the channel delivers within {@code quiet} of the last event. */
    private static List<CmEvent> drain(EventChannel ch, Duration quiet) throws Exception {
        List<CmEvent> events = new ArrayList<>();
        for (CmEvent e = ch.await(quiet); e != null; e = ch.await(quiet)) {
            events.add(e);
        }
        return events;
    }

    /** The Soft-RoCE address in the guest harness; any non-loopback IPv4 address elsewhere. */
    private static InetAddress localAddress() throws Exception {
        for (NetworkInterface nif : Collections.list(NetworkInterface.getNetworkInterfaces())) {
            for (InetAddress a : Collections.list(nif.getInetAddresses())) {
                if (a instanceof Inet4Address && !a.isLoopbackAddress()) {
                    return a;
                }
            }
        }
        throw new IllegalStateException("no IPv4 address");
    }

    private static String javaBinary() {
        return System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
    }

    /**
     * The class path of this test: java.class.path under Surefire, but the JUnit console launcher
     * (the guest harness) loads tests through its own class loader, so the code sources of the
     * classes the child needs, and that loader's URLs, are added.
     */
    private static String childClassPath() throws URISyntaxException {
        Set<String> entries = new LinkedHashSet<>();
        for (Class<?> c : List.of(JnaSafetyTest.class, Fabric.class, CmEvent.class, com.sun.jna.Native.class,
                org.slf4j.LoggerFactory.class)) {
            entries.add(new File(c.getProtectionDomain().getCodeSource().getLocation().toURI()).getPath());
        }
        for (ClassLoader l = Thread.currentThread().getContextClassLoader(); l != null; l = l.getParent()) {
            if (l instanceof URLClassLoader u) {
                for (URL url : u.getURLs()) {
                    if ("file".equals(url.getProtocol())) {
                        entries.add(new File(url.toURI()).getPath());
                    }
                }
            }
        }
        entries.addAll(List.of(System.getProperty("java.class.path").split(File.pathSeparator)));
        entries.remove("");
        return String.join(File.pathSeparator, entries);
    }
}
