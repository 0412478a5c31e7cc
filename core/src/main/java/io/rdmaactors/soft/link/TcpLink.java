package io.rdmaactors.soft.link;

import io.rdmaactors.soft.wire.CmMessage;
import io.rdmaactors.soft.wire.Packet;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ProtocolException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The wire between two processes: one TCP loopback socket from a process to a listener of
 * another, carrying the CM messages and packets of every RC connection between them, each frame
 * tagged with its connection's number (a {@link LinkConnection}). Served by one
 * {@link LinkSelector}. A small frame is written at once by its sender when nothing waits
 * before it, so it takes no thread hop; a large payload in registered memory goes from its MR
 * to the socket in the I/O thread's gathering writes; what the socket does not take waits in a
 * bounded outbox for OP_WRITE, which takes the connections in turn ({@link LinkOutbox}). The ACKs
 * a polling consumer's read decides wait up to {@link #DEFER_NANOS} for a frame of its side to go
 * out with (the answer to the request, usually), so that a round trip costs each side one write
 * to the socket. A reader never blocks on a write. Frames pass through one direct buffer each
 * way; a payload read from the wire is scattered into its MR from the input buffer.
 * On the accepting side nothing but the {@link LinkHandshake} is read until the peer passed it.
 * <p>
 * Between two processes of one host the frames go through {@link LinkSharedMemory} instead,
 * read and written by the same code as the socket's bytes, and the socket carries only doorbells:
 * a byte that wakes a peer whose reader went to sleep or whose writer waits for room
 * ({@link LinkRing}). A poller then reads and writes the link without one system call. The
 * socket's end is still the link's: at it the reader takes what the ring holds, then ends.
 */
public final class TcpLink implements LinkSelector.Handler {

    private static final Logger log = LoggerFactory.getLogger(TcpLink.class);
    /** Larger than a 64 KiB message plus its header, so several packets leave in one write. */
    private static final int BUFFER = 1 << 18;
    /** From this size a direct payload skips the output buffer. */
    private static final int DIRECT_PAYLOAD = 16 << 10;
    /** Below this much room after what was received, the input buffer is compacted before a read. */
    private static final int TAIL = 64 << 10;
    /** Reads in one turn of the I/O thread at most, so one busy link does not starve the others. */
    private static final int READS_PER_TURN = 8;
    /** Frames a turn parses at most on shared memory, for the same reason. */
    private static final int FRAMES_PER_TURN = 256;
    /** Large payloads one gathering write takes at most (a few, so one syscall carries a window of them). */
    public static final int GATHERED_PAYLOADS = 8;
    /** An input buffer grown for a large message is kept up to this size, for the next one. */
    private static final int KEPT_INPUT = 32 << 20;
    /**
     * Frames waiting for a peer that does not read: beyond this the link ends in error (a few
     * MB of references; payloads are read from their MRs when they go out, not copied).
     */
    public static final int MAX_OUTBOX = 1 << 18;

    /** Who a link delivers to: a listener until a REQ made an id, then that id. */
    public interface Endpoint {
        void onCm(LinkConnection via, CmMessage message);

        Packet onRequest(Packet request);

        /** The response onRequest returned is queued: what the request's fault raises may follow it now. */
        void responded();

        /** Whether its packets still waiting in the outbox may go out (see SoftQueuePair.transmits). */
        boolean transmits();

        void onResponse(Packet response);

        /** The peer ended the connection, or the link under it failed. */
        void onLinkClosed(LinkConnection connection);
    }

    private final TcpLinks links;
    private final LinkSelector selector;
    private final SocketChannel channel;
    private final SelectionKey key;
    private final String name;
    /** The address this side connected to, the key links are shared by; null on the accepting side. */
    public final InetSocketAddress remoteListener;
    /** On the accepting side, the acceptor whose listener a REQ on a new connection goes to. */
    private final LinkAcceptor from;
    /** On the accepting side until the peer proved it knows the cookie; read by the I/O thread only. */
    private LinkHandshake handshake;
    private final Map<Integer, LinkConnection> connections = new ConcurrentHashMap<>();
    /** Under this: the connecting side numbers the connections. */
    private int lastNumber;
    /** Under this: no connection is added once the connecting side decided to close the link. */
    private boolean closing;
    /** Under this: whether the ledger counts the link now (see {@link #accountUse}). */
    private boolean counted;

    /**
     * Whoever holds this reads and parses: the I/O thread, or a thread polling a CQ that
     * progresses the link meanwhile ({@link #progress}). What follows up to the next comment is
     * theirs.
     */
    private final AtomicBoolean reader = new AtomicBoolean();
    /** The I/O thread found {@link #reader} taken by a poller: the poller hands the turn back to it when done. */
    private final AtomicBoolean resumeWanted = new AtomicBoolean();
    /** A polling thread parses packets only: at a CM or close frame it hands the rest to the I/O thread. */
    private boolean packetsOnly;
    private boolean handedOver;
    /** Read mode between reads: what was received and not parsed yet. */
    private ByteBuffer in;
    private final ByteBuffer standardIn;
    /** The last input buffer grown for a large frame, kept for the next one. */
    private ByteBuffer spareIn;
    /** Set once serve() allowed reading. */
    private volatile boolean serving;
    /** When a consumer polling a CQ of a connection on this link last progressed it. */
    private volatile long polledAt;
    /** A progress this recent, by a consumer still polling, counts as a poller at work on the link. */
    private static final long POLLED_NANOS = 200_000;

    // under outbox
    private final LinkOutbox outbox = new LinkOutbox();
    /** Where frames are encoded; what one gathering write sends is views of it and the large payloads between. */
    private final ByteBuffer out = ByteBuffer.allocateDirect(BUFFER);
    private final ByteBuffer[] gather = new ByteBuffer[2 * GATHERED_PAYLOADS + 1];
    /** The part of {@link #gather} the socket has not taken yet; empty when nothing is being written. */
    private int gatherFrom;
    private int gatherTo;
    private boolean writeInterest;
    /** A thread polling a CQ reads for the link now ({@link #polled}): its I/O thread does not. */
    private boolean readPaused;
    /** One thread at a time writes: the one that set this; others only queue. */
    private boolean writing;
    /**
     * The reader (the I/O thread or a poller, {@link #reader}) parses what its reads brought: the
     * responses it decides leave together after them.
     */
    private Thread dispatching;
    /** The thread whose frames wait for {@link #uncork()} to leave together (a posted list's). */
    private Thread corked;
    private boolean closeWhenFlushed;
    /**
     * Since when the ACKs a poller's read decided wait, unsent (0: none wait): a frame posted
     * meanwhile takes them along in its write, so that a request answered at once costs its
     * responder one system call, not two. Only while the I/O thread ticks (the link's reading is
     * paused), whose tick sends what waits longer. Written under outbox.
     */
    private volatile long deferredSince;
    /** The reader's turn decided a response its requester waits for (a READ's data, a NAK): it goes at once. */
    private boolean urgent;
    /** ACKs wait this long at most for a frame to go with while their poller goes on polling. */
    private static final long DEFER_NANOS = 20_000;
    /** Written under outbox; read without it by the I/O thread to stop parsing a link that ended. */
    private volatile boolean closed;
    /** The rings the frames go through, or null: through the socket. Set before the first frame. */
    private volatile LinkSharedMemory shared;
    private static final byte[] DOORBELL = {1};
    /** The I/O thread's: where the peer's doorbells are read to. */
    private final ByteBuffer doorbells = ByteBuffer.allocate(64);

    /**
     * @param channel a connected, non-blocking channel
     * @param shared  on the connecting side, the memory the peer took in the handshake; else null
     */
    public TcpLink(TcpLinks links, LinkSelector selector, SocketChannel channel, InetSocketAddress remoteListener,
            LinkAcceptor from, LinkSharedMemory shared) throws IOException {
        this.links = links;
        this.shared = shared;
        this.selector = selector;
        this.channel = channel;
        this.remoteListener = remoteListener;
        this.from = from;
        this.handshake = from == null ? null : new LinkHandshake(links.secret());
        channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
        this.name = "link " + channel.getLocalAddress() + " - " + channel.getRemoteAddress();
        this.standardIn = ByteBuffer.allocateDirect(BUFFER);
        this.in = standardIn.flip();
        if (from != null) {
            from.opened();
        }
        links.track(this);
        accountUse();
        selector.linkOpened();
        try {
            // nothing is read until serve(): the I/O thread may be another than the creator's
            this.key = selector.register(channel, 0, this);
        } catch (IOException | RuntimeException e) {
            closed = true;
            links.untrack(this);
            throw e;
        }
    }

    /**
     * Starts reading, once whoever made the link recorded it (a handshake in progress, a link to a
     * listener): its I/O thread, another than an acceptor's, may serve it, end it or see its
     * handshake done at once.
     */
    public void serve() {
        serving = true;
        key.interestOps(SelectionKey.OP_READ);
        selector.wakeup();
    }

    /** A new connection on the connecting side, or null once the link is closing. */
    public synchronized LinkConnection open(Endpoint endpoint) {
        if (closing) {
            return null;
        }
        LinkConnection c = new LinkConnection(this, ++lastNumber, endpoint);
        connections.put(c.number, c);
        accountUse();
        return c;
    }

    /**
     * The ledger counts a link while it is in use: a connection is on it or its handshake is under
     * way. A link nobody uses is the fabric's to close (the connecting side closes it at once, the
     * accepting side when its peer does), so the close of the last CM id on it is the moment the
     * ledger forgets it, whichever side's socket goes first.
     */
    private synchronized void accountUse() {
        boolean used = !closed && (handshake != null || !connections.isEmpty());
        if (used != counted) {
            counted = used;
            links.counted(used);
        }
    }

    /** A connection ended on this side: the peer hears it; the connecting side closes a link nobody uses. */
    public void release(LinkConnection c) {
        connections.remove(c.number);
        accountUse();
        send(LinkFrame.close(c));
        closeIfUnused();
    }

    private void closeIfUnused() {
        boolean unused;
        synchronized (this) {
            unused = remoteListener != null && !closing && connections.isEmpty();
            if (unused) {
                closing = true;
            }
        }
        if (unused) {
            links.forget(this);
            closeWhenFlushed();
        }
    }

    // ---------------------------------------------------------------- writing

    public void send(LinkFrame frame) {
        boolean overflow = false;
        synchronized (outbox) {
            if (closed) {
                return;
            }
            outbox.add(frame);
            if (dispatching == Thread.currentThread() && (frame.packet() == null
                    || frame.packet().kind() != Packet.Kind.ACK)) {
                urgent = true;
            }
            if (outbox.size() > MAX_OUTBOX) {
                overflow = true;
            } else if (writing || writeInterest || dispatching == Thread.currentThread()) {
                // the writer at work, OP_WRITE or the end of the reader's turn takes it; another
                // thread's frame does not wait for that turn, which a stream coming in makes long
                return;
            } else if (shared == null && !selector.inThread() && large(frame)) {
                // a large payload is the I/O thread's to write, gathered with those posted after it,
                // while the posting thread goes on
                interest(true);
                return;
            } else if (corked == Thread.currentThread()) {
                return;
            } else {
                writing = true;
                deferredSince = 0; // they go now, with this frame
            }
        }
        if (overflow) {
            end(new IOException("more than " + MAX_OUTBOX + " frames wait for a peer that does not read"));
        } else {
            flush();
        }
    }

    /**
     * The calling thread's frames wait until {@link #uncork()} and leave in one write, as a device
     * takes a posted list at one doorbell: a stream's Sends cost one system call a list, not one
     * each. False, with nothing to undo, when a thread gathers frames here already (a reader's
     * turn, whose end writes them), and on shared memory, where a frame costs no system call and
     * the peer may start on it while the rest are written.
     */
    public boolean cork() {
        synchronized (outbox) {
            if (shared != null || corked != null || dispatching == Thread.currentThread()) {
                return false;
            }
            corked = Thread.currentThread();
            return true;
        }
    }

    /** Writes what the thread queued since {@link #cork()}. */
    public void uncork() {
        boolean mine;
        synchronized (outbox) {
            corked = null;
            mine = !writeInterest && startWriting();
        }
        if (mine) {
            flush();
        }
    }

    /**
     * Writes what the socket takes now, by the thread that set {@link #writing}, with the outbox
     * unlocked during each write so that senders only queue meanwhile; what the socket does not
     * take waits for OP_WRITE.
     */
    private void flush() {
        try {
            while (true) {
                synchronized (outbox) {
                    if (gatherFrom == gatherTo && !fill()) {
                        writing = false;
                        interest(false);
                        if (closeWhenFlushed && !closed) {
                            closed = true;
                            selector.later(this::shutdown);
                        }
                        return;
                    }
                }
                write();
                while (gatherFrom < gatherTo && !gather[gatherFrom].hasRemaining()) {
                    gather[gatherFrom++] = null;
                }
                if (gatherFrom < gatherTo) {
                    synchronized (outbox) {
                        writing = false;
                        interest(true);
                    }
                    if (shared == null || shared.out().awaitRoom()) {
                        return;
                    }
                    synchronized (outbox) {
                        // room came meanwhile: write on, unless a doorbell's thread took the writer's part
                        if (!startWriting()) {
                            return;
                        }
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            synchronized (outbox) {
                writing = false;
            }
            end(e);
        }
    }

    /** One gathering write to the socket or the ring; the reader asleep on the ring hears its doorbell. */
    private void write() throws IOException {
        LinkSharedMemory m = shared;
        if (m == null) {
            channel.write(gather, gatherFrom, gatherTo - gatherFrom);
        } else if (m.out().write(gather, gatherFrom, gatherTo - gatherFrom) > 0 && m.out().wakeReader()) {
            doorbell();
        }
    }

    /**
     * Wakes the peer's I/O thread. A socket too full to take it already holds doorbells the peer
     * has not read, and a doorbell says only "look at the rings".
     */
    private void doorbell() throws IOException {
        channel.write(ByteBuffer.wrap(DOORBELL));
    }

    /** Takes the writer's part when nobody has it and there is something to write. Under outbox. */
    private boolean startWriting() {
        if (writing || closed || (gatherFrom == gatherTo && outbox.isEmpty())) {
            return false;
        }
        writing = true;
        deferredSince = 0;
        return true;
    }

    /**
     * Encodes queued frames into {@link #out} while they fit, and lays out the next gathering
     * write; false when nothing was queued.
     */
    private boolean fill() {
        out.clear();
        gatherFrom = 0;
        gatherTo = 0;
        int segment = 0;
        for (LinkFrame f; (f = outbox.peek()) != null; ) {
            if (f.connection().aborted && (f.packet() != null || f.cm() != null)) {
                outbox.poll(); // a connection that died sends nothing more but its end
                continue;
            }
            if (f.packet() != null && f.packet().isRequest() && !f.connection().transmits()) {
                // its QP flushed since: the payload's buffer may hold another message now. A response
                // (ACK, NAK, READ response, atomic reply) was decided before and goes, as rxe sends
                // the NAK of an access error before its QP moves to error
                outbox.poll();
                continue;
            }
            int head = f.headerSize();
            ByteBuffer payload = f.payload();
            int n = payload == null ? 0 : payload.remaining();
            boolean separate = large(f);
            if (out.remaining() < head + (separate ? 0 : n)) {
                break;
            }
            outbox.poll();
            f.encode(out, !separate);
            if (separate) {
                gather[gatherTo++] = out.slice(segment, out.position() - segment);
                gather[gatherTo++] = payload.duplicate();
                segment = out.position();
                if (gatherTo == 2 * GATHERED_PAYLOADS) {
                    break;
                }
            }
        }
        if (out.position() > segment) {
            // nothing gathered from elsewhere (the usual case): the staging buffer itself, no view per write
            gather[gatherTo++] = segment == 0 ? out.flip() : out.slice(segment, out.position() - segment);
        }
        return gatherTo > 0;
    }

    /** Too large to stage, or in registered memory: after its header, straight from its buffer to the socket. */
    private boolean large(LinkFrame f) {
        ByteBuffer payload = f.payload();
        if (payload == null) {
            return false;
        }
        int n = payload.remaining();
        return n > out.capacity() - f.headerSize() || (payload.isDirect() && n >= DIRECT_PAYLOAD);
    }

    /** Whether a writer waits for the socket (OP_WRITE) or, on shared memory, for the reader's doorbell. */
    private void interest(boolean write) {
        if (write != writeInterest && key.isValid()) {
            writeInterest = write;
            if (shared == null) {
                key.interestOps(ops());
                if (write && !selector.inThread()) {
                    selector.wakeup();
                }
            }
        }
    }

    /**
     * What the I/O thread waits for. Under outbox. On shared memory always the socket's doorbells
     * and end: a reader paused is one that does not arm its ring.
     */
    private int ops() {
        if (shared != null) {
            return SelectionKey.OP_READ;
        }
        return (readPaused ? 0 : SelectionKey.OP_READ) | (writeInterest ? SelectionKey.OP_WRITE : 0);
    }

    /** On the I/O thread: a poller reads for the link, so its readiness need not wake this thread. */
    private void pauseReading() {
        synchronized (outbox) {
            if (readPaused || closed || !key.isValid()) {
                return;
            }
            readPaused = true;
            key.interestOps(ops());
        }
        selector.paused(this);
    }

    /**
     * The I/O thread reads again: nobody polls, or nobody did for a while. On shared memory the
     * ring is armed now (the pollers left it unarmed), and what came meanwhile is read.
     */
    public void resumeReading() {
        synchronized (outbox) {
            if (!readPaused) {
                return;
            }
            readPaused = false;
            if (!closed && key.isValid()) {
                key.interestOps(ops());
            }
        }
        selector.resumed(this);
        flushDeferred(0); // no tick sends them from now on
        LinkSharedMemory m = shared;
        if (m != null && !closed && !m.in().armReader()) {
            selector.execute(this::resume);
        }
    }

    /** On the I/O thread's tick while paused: takes reading back once the pollers went quiet; whether they still poll. */
    public boolean resumeUnlessPolled() {
        flushDeferred(DEFER_NANOS);
        if (polled()) {
            return true;
        }
        resumeReading();
        return false;
    }

    /** Whether a consumer polls for this link now, so that its I/O thread need not wake for it. */
    private boolean polled() {
        return links.polling() && System.nanoTime() - polledAt < POLLED_NANOS;
    }

    /** Closes the link once everything queued was written. */
    private void closeWhenFlushed() {
        synchronized (outbox) {
            if (closed) {
                return;
            }
            closeWhenFlushed = true;
            if (writing || writeInterest) {
                return; // the writer at work or OP_WRITE closes it when done
            }
            writing = true;
        }
        flush();
    }

    // ---------------------------------------------------------------- on the I/O thread

    @Override
    public void ready(SelectionKey selected) throws IOException {
        if (closed) {
            return; // ended: its socket closes on this thread's next turn; nothing more is parsed
        }
        if (shared != null) {
            doorbellRang();
            return;
        }
        if (selected.isWritable()) {
            boolean mine;
            synchronized (outbox) {
                mine = startWriting();
                if (!mine && !writing) {
                    interest(false);
                }
            }
            if (mine) {
                flush();
            }
        }
        if (!selected.isValid() || !selected.isReadable()) {
            return;
        }
        if (handshake == null && polled()) {
            pauseReading(); // what came is the poller's to read: it progresses this link
        } else if (!readTurnIfFree() && handshake == null) {
            // a poller that went quiet or armed its CQ still holds the turn (descheduled, say): the
            // socket stays readable until somebody reads, and a thread waiting on it would spin on
            // that readiness, taking the core from the poller; it waits for the poller's hand-back
            pauseReading();
            resume();
        }
    }

    /**
     * On shared memory, the socket is readable: the peer's doorbells, or its end. A writer waiting
     * for room writes on; the ring is read, unless a poller reads it (then it stays unarmed, so
     * that the peer rings no more); at the end, what the ring still holds is taken first.
     */
    private void doorbellRang() throws IOException {
        boolean end = false;
        for (int n = doorbells.capacity(); n == doorbells.capacity(); ) {
            n = channel.read(doorbells.clear());
            end = n < 0;
        }
        boolean mine;
        synchronized (outbox) {
            mine = startWriting();
        }
        if (mine) {
            flush();
        }
        if (end) {
            if (takeReader()) {
                try {
                    while (!closed && !read()) {
                        Thread.onSpinWait(); // the ring's last frames: the peer wrote them before it closed
                    }
                } finally {
                    reader.set(false);
                }
            }
            throw new EOFException();
        }
        if (polled()) {
            pauseReading();
        } else if (!readTurnIfFree()) {
            selector.later(this::resume); // after the poller: the ring was not armed
        }
    }

    /** On the I/O thread: a read turn, unless a poller reads now; whether it read. */
    private boolean readTurnIfFree() throws IOException {
        if (!reader.compareAndSet(false, true)) {
            return false;
        }
        try {
            readTurn();
        } finally {
            reader.set(false);
        }
        return true;
    }

    /**
     * On the I/O thread, holding {@link #reader}: reads a turn; on shared memory it then arms the
     * ring, or comes back on its next turn when the ring still holds frames.
     */
    private void readTurn() throws IOException {
        boolean drained = read();
        LinkSharedMemory m = shared;
        if (m != null && !closed && (!drained || !m.in().armReader())) {
            selector.later(this::resume);
        }
    }

    /**
     * Takes {@link #reader} once a poller's turn ends (it parses a turn's packets at most, then
     * stops at a CM frame again); false, without it, once the link closed.
     */
    private boolean takeReader() {
        while (!reader.compareAndSet(false, true)) {
            if (closed) {
                return false;
            }
            Thread.onSpinWait();
        }
        return true;
    }

    /**
     * Reads and parses what the socket holds now, on the calling thread, a thread polling a CQ
     * (as UCX's progress does): a packet that arrives while its consumer polls is taken without
     * waiting for the I/O thread's wake-up. Skipped while another thread reads, before the link
     * serves and during its handshake. CM and close frames stay the I/O thread's: at the first,
     * the rest is handed to it.
     */
    public void progress() {
        polledAt = System.nanoTime();
        flushDeferred(DEFER_NANOS);
        LinkSharedMemory m = shared;
        if (m != null && m.in().isEmpty()) {
            // most polls of a spin find nothing: no reader's turn to take, no monitor to enter.
            // What an earlier read left is a partial frame, or one handed over to the I/O thread
            return;
        }
        if (!serving || closed || !reader.compareAndSet(false, true)) {
            return;
        }
        boolean handOver = false;
        try {
            if (handshake == null) {
                packetsOnly = true;
                parse(); // what an earlier read left, a frame handed over included
                if (!handedOver) {
                    read();
                }
                handOver = handedOver;
            }
        } catch (IOException | RuntimeException e) {
            failed(e);
        } finally {
            packetsOnly = false;
            handedOver = false;
            reader.set(false);
        }
        boolean wanted = resumeWanted.get() && resumeWanted.getAndSet(false);
        if (handOver || wanted) {
            selector.execute(this::resume);
        }
    }

    /**
     * On the I/O thread: parses what a polling thread left at a CM or close frame, then reads on.
     * While a poller reads, the thread does not wait for it: the poller runs this again once its
     * turn ends ({@link #resumeWanted}), so the core goes to whoever has work.
     */
    private void resume() {
        resumeWanted.set(true);
        if (!reader.compareAndSet(false, true)) {
            return;
        }
        resumeWanted.set(false);
        try {
            if (!closed) {
                parse();
            }
            if (!closed) {
                readTurn();
            }
            if (shared == null && readPaused && !polled()) {
                resumeReading(); // paused only to wait for this hand-back (ready): nobody polls now
            }
        } catch (IOException | RuntimeException e) {
            failed(e);
        } finally {
            reader.set(false);
        }
    }

    /**
     * Reads and parses until the socket has nothing more (or for a few reads, so one busy link
     * does not starve the others); the responses to all of it leave together at the end. True
     * when it found nothing more to read.
     */
    private boolean read() throws IOException {
        synchronized (outbox) {
            dispatching = Thread.currentThread();
        }
        try {
            for (int reads = 0; reads < READS_PER_TURN && !closed; reads++) {
                if (shared != null && !in.hasRemaining()) {
                    RingTurn turn = readRing();
                    if (turn != RingTurn.COPY) {
                        return turn == RingTurn.DRAINED;
                    }
                }
                int from = in.position();
                if (in.capacity() - in.limit() < TAIL) {
                    in.compact().flip();
                    from = 0;
                }
                // into the tail: what was not parsed yet stays where it is, not copied at every read
                int received = in.limit();
                int room = in.capacity() - received;
                // from the ring, only the frame that could not be parsed where it lies (it wraps, or
                // is not all written yet): the frames behind it are, once it is parsed
                int limit = shared == null ? in.capacity() : received + Math.min(room, toFrameEnd(received - from));
                in.limit(limit).position(received);
                int n;
                try {
                    n = readIn();
                } finally {
                    in.limit(in.position()).position(from);
                }
                if (n < 0) {
                    throw new EOFException();
                }
                if (n == 0) {
                    return true;
                }
                parse();
                if (handedOver) {
                    return false;
                }
                if (shared == null && n < room) {
                    // a short read emptied the socket: another would only find nothing, one system call more
                    return true;
                }
            }
            return false;
        } finally {
            boolean mine;
            synchronized (outbox) {
                dispatching = null;
                boolean acksOnly = !urgent;
                urgent = false;
                if (acksOnly && packetsOnly && readPaused && shared == null && !outbox.isEmpty() && !writing
                        && !writeInterest) {
                    if (deferredSince == 0) {
                        deferredSince = System.nanoTime();
                    }
                    mine = false;
                } else {
                    mine = !writeInterest && startWriting();
                }
            }
            if (mine) {
                flush();
            }
        }
    }

    /** Sends the ACKs that waited for a frame to go with, if they waited {@code nanos} at least. */
    private void flushDeferred(long nanos) {
        if (deferredSince == 0) {
            return;
        }
        boolean mine;
        synchronized (outbox) {
            if (deferredSince == 0 || System.nanoTime() - deferredSince < nanos) {
                return;
            }
            deferredSince = 0;
            mine = !writeInterest && startWriting();
        }
        if (mine) {
            flush();
        }
    }

    /**
     * The bytes that complete the frame whose first {@code pending} bytes the input buffer holds:
     * the rest of its length word first, then the rest of its body (its length checked by parse).
     */
    private int toFrameEnd(int pending) {
        return pending < 4 ? 4 - pending : 4 + in.getInt(in.position()) - pending;
    }

    /** How a turn of frames read where they lie ended. */
    private enum RingTurn {
        /** No byte left to read. */
        DRAINED,
        /** The turn's share taken, a frame handed over, or the link ended: more may wait. */
        MORE,
        /** The next frame wraps, or is not all written yet: it is copied out, as a socket's bytes are. */
        COPY
    }

    /**
     * On shared memory, the input buffer empty: the ring's whole frames, parsed where they lie
     * rather than copied out first, so that a payload's one copy is the one into its memory
     * region (a packet's payload is consumed before its dispatch returns).
     */
    private RingTurn readRing() throws IOException {
        LinkRing ring = shared.in();
        for (int frames = 0; frames < FRAMES_PER_TURN; frames++) {
            if (closed) {
                return RingTurn.MORE;
            }
            long available = ring.available();
            if (available == 0) {
                return RingTurn.DRAINED;
            }
            if (available < 4) {
                return RingTurn.COPY;
            }
            int length = ring.frameLength();
            LinkFrame.checkLength(length);
            // one that is not all written yet may be larger than the ring: the copy makes room for the rest
            int at = available < 4L + length ? -1 : ring.inPlace(4 + length);
            if (at < 0) {
                return RingTurn.COPY;
            }
            if (packetsOnly && ring.bytes().get(at + 4) != LinkFrame.PACKET) {
                handedOver = true; // left in the ring, for the I/O thread
                return RingTurn.MORE;
            }
            dispatch(ring.bytes(), at + 4, at + 4 + length);
            ring.skip(4 + length);
            if (ring.wakeWriter()) {
                doorbell();
            }
        }
        return RingTurn.MORE;
    }

    /** From the socket or the ring; the writer waiting for room on the ring hears its doorbell. */
    private int readIn() throws IOException {
        LinkSharedMemory m = shared;
        if (m == null) {
            return channel.read(in);
        }
        int n = m.in().read(in);
        if (n > 0 && m.in().wakeWriter()) {
            doorbell();
        }
        return n;
    }

    private void parse() throws IOException {
        if (handshake != null) {
            if (!handshake.accept(in, channel)) {
                return;
            }
            LinkSharedMemory.Offer offer = handshake.offer();
            handshake = null;
            if (offer != null) {
                // the peer sends nothing before the answer: every byte after it is the ring's or a doorbell
                LinkSharedMemory m = links.sharesMemory() ? LinkSharedMemory.open(offer) : null;
                LinkHandshake.answer(channel, m != null);
                shared = m;
            }
            links.authenticated(this);
            accountUse();
        }
        while (in.remaining() >= 4) {
            int length = in.getInt(in.position());
            LinkFrame.checkLength(length);
            if (in.remaining() - 4 < length) {
                if (4 + length > in.capacity()) {
                    grow(4 + length);
                }
                break;
            }
            int start = in.position() + 4;
            if (packetsOnly && in.get(start) != LinkFrame.PACKET) {
                handedOver = true;
                return;
            }
            dispatch(in, start, start + length);
            if (closed) {
                return;
            }
            in.position(start + length);
        }
        if (in != standardIn && !in.hasRemaining()) {
            spareIn = in.capacity() <= KEPT_INPUT ? in : null;
            in = standardIn.clear().flip();
        }
    }

    /**
     * Room for a frame larger than the input buffer: the frame's announced length at once, as the
     * peer passed the handshake (the length is within the largest message), from the spare buffer
     * of an earlier large frame when that is large enough.
     */
    private void grow(int frame) {
        if (in.position() > 0 || in.limit() < in.capacity()) {
            return; // the buffer is not full yet: compacting and reading make progress
        }
        ByteBuffer bigger = spareIn != null && spareIn.capacity() >= frame ? spareIn.clear()
                : ByteBuffer.allocateDirect(frame);
        spareIn = null;
        bigger.put(in).flip();
        in = bigger;
    }

    private void dispatch(ByteBuffer frames, int start, int end) throws IOException {
        byte tag = frames.get(start);
        int number = frames.getInt(start + 1);
        int body = start + 5;
        switch (tag) {
            case LinkFrame.PACKET -> {
                Packet p = LinkFrame.decodePacket(frames, body, end);
                LinkConnection c = connections.get(number);
                if (c != null) {
                    c.onPacket(p);
                }
            }
            case LinkFrame.CM -> {
                CmMessage m = LinkFrame.decodeCm(frames, body, end);
                LinkConnection c = connections.get(number);
                if (c == null && from != null && m.type() == CmMessage.Type.REQ) {
                    c = new LinkConnection(this, number, from.listener);
                    connections.put(number, c);
                    accountUse();
                }
                if (c != null) {
                    c.onCm(m);
                }
            }
            case LinkFrame.CLOSE -> {
                if (end != body) {
                    throw new ProtocolException("a close frame with a body");
                }
                LinkConnection c = connections.remove(number);
                if (c != null) {
                    accountUse(); // before the id hears its end: its close returns with the ledger settled
                    c.onEnded();
                    closeIfUnused(); // the peer ended the link's last connection
                }
            }
            default -> throw new ProtocolException("frame tag " + tag);
        }
    }

    @Override
    public void failed(Throwable cause) {
        if (cause instanceof LinkHandshake.AuthenticationException) {
            log.warn("{} refused: {}", name, cause.getMessage());
        } else if (cause instanceof EOFException) {
            log.debug("{} closed by the peer", name);
        } else {
            log.debug("{} failed", name, cause);
        }
        end(cause);
    }

    // ---------------------------------------------------------------- ending

    /** Ends the link at once (failure, EOF, an abort): every connection on it hears that it ended. */
    public void end(Throwable cause) {
        synchronized (outbox) {
            if (closed) {
                return;
            }
            closed = true;
            outbox.clear();
        }
        synchronized (this) {
            closing = true;
        }
        links.forget(this);
        List<LinkConnection> orphans = List.copyOf(connections.values());
        connections.clear();
        accountUse();
        // on the I/O thread's next turn, when the thread that failed the link holds no id's or QP's lock
        selector.later(() -> {
            shutdown();
            for (LinkConnection c : orphans) {
                c.onEnded();
            }
        });
        if (cause != null && !(cause instanceof EOFException) && !(cause instanceof IOException)) {
            log.warn("{} ended by an error", name, cause);
        }
    }

    private void shutdown() {
        synchronized (outbox) {
            closed = true;
            outbox.clear();
        }
        selector.resumed(this);
        key.cancel();
        try {
            channel.close();
        } catch (IOException e) {
            log.debug("closing {}", name, e);
        }
        links.untrack(this);
    }

    /** The fabric closes: what is queued gets one chance to leave, then the socket closes. */
    public void close() {
        boolean mine;
        synchronized (outbox) {
            mine = !writeInterest && startWriting();
        }
        if (mine) {
            flush();
        }
        synchronized (outbox) {
            closed = true;
            outbox.clear();
        }
        selector.resumed(this);
        selector.close(channel);
        links.untrack(this);
    }

    /** Its socket closed: its I/O thread serves one link fewer; the listener that accepted it may take another. */
    public void released() {
        accountUse();
        selector.linkClosed();
        if (from != null) {
            from.released();
        }
    }

    /** Whether its frames go through shared memory. */
    public boolean sharesMemory() {
        return shared != null;
    }

    @Override
    public String toString() {
        return shared == null ? name : name + " (shared memory)";
    }
}
