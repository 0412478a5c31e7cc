package io.rdmaactors.soft;

import java.io.EOFException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.LinkedBlockingQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One RC connection between two processes: a TCP loopback socket carrying CM messages and
 * transport packets. A reader thread hands frames to the endpoint; a writer thread drains an
 * outbox, so a reader never blocks on a full socket (two readers waiting on each other's writes
 * would deadlock). Frames pass through one direct buffer each way, not the JDK's temporary ones;
 * a large payload in registered memory goes from there to the socket in a gathering write.
 */
final class TcpLink {

    private static final Logger log = LoggerFactory.getLogger(TcpLink.class);
    private static final Object CLOSE = new Object();
    /** Larger than a 64 KiB message plus its header, so several packets leave in one write. */
    private static final int BUFFER = 1 << 18;
    /** From this size a direct payload skips the output buffer. */
    private static final int DIRECT_PAYLOAD = 16 << 10;
    /** Tag, kind, psn, opcode, flags, imm, address, rkey, length, compare/add, swap, status, port, data length. */
    private static final int PACKET_HEADER = 1 + 1 + 8 + 1 + 4 + 4 + 8 + 4 + 4 + 8 + 8 + 8 + 1 + 4;

    /** Who a link delivers to: a listener until a REQ made an id, then that id. */
    interface Endpoint {
        void onCm(TcpLink link, CmMessage message);

        Packet onRequest(Packet request);

        void onResponse(Packet response);

        void onLinkClosed(TcpLink link);
    }

    private final SoftFabric fabric;
    private final Socket socket;
    private final SocketChannel channel;
    /** Read mode: what the reader has received and not parsed yet. */
    private final ByteBuffer in = ByteBuffer.allocateDirect(BUFFER).flip();
    /** Write mode: what the writer has framed and not sent yet. */
    private final ByteBuffer out = ByteBuffer.allocateDirect(BUFFER);
    private final LinkedBlockingQueue<Object> outbox = new LinkedBlockingQueue<>();
    private final Thread reader;
    private final Thread writer;
    private volatile Endpoint endpoint;
    private volatile boolean closed;
    /** Fault injection: frames are silently lost both ways. */
    volatile boolean dropped;

    /** @param socket a connected socket made through a {@link SocketChannel} */
    TcpLink(SoftFabric fabric, Socket socket, Endpoint endpoint) throws IOException {
        this.fabric = fabric;
        this.socket = socket;
        this.channel = socket.getChannel();
        this.endpoint = endpoint;
        socket.setTcpNoDelay(true);
        String name = "rdma-" + fabric.id + "-link-" + socket.getLocalPort() + "-" + socket.getPort();
        this.reader = new Thread(this::read, name + "-in");
        this.writer = new Thread(this::write, name + "-out");
        reader.setDaemon(true);
        writer.setDaemon(true);
        fabric.track(this);
        reader.start();
        writer.start();
    }

    void attach(Endpoint newEndpoint) {
        endpoint = newEndpoint;
    }

    void send(Packet packet) {
        if (!closed && !dropped) {
            outbox.add(packet);
        }
    }

    void send(CmMessage message) {
        if (!closed && !dropped) {
            outbox.add(message);
        }
    }

    private void read() {
        try {
            while (!closed) {
                int tag = readByte();
                if (tag == 0) {
                    Packet p = readPacket();
                    if (dropped) {
                        continue;
                    }
                    if (p.isRequest()) {
                        Packet response = endpoint.onRequest(p);
                        if (response != null) {
                            send(response);
                        }
                    } else {
                        endpoint.onResponse(p);
                    }
                } else {
                    CmMessage m = readCm();
                    if (!dropped) {
                        endpoint.onCm(this, m);
                    }
                }
            }
        } catch (EOFException e) {
            log.debug("link {} closed by the peer", reader.getName());
        } catch (IOException | RuntimeException e) {
            if (!closed) {
                log.debug("link {} failed", reader.getName(), e);
            }
        }
        boolean byPeer = !closed;
        shutdown();
        if (byPeer) {
            endpoint.onLinkClosed(this);
        }
    }

    private void write() {
        try {
            while (true) {
                Object frame = outbox.take();
                do {
                    if (frame == CLOSE) {
                        flush();
                        return;
                    }
                    if (frame instanceof Packet p) {
                        writePacket(p);
                    } else {
                        writeCm((CmMessage) frame);
                    }
                    frame = outbox.poll();
                } while (frame != null);
                flush();
            }
        } catch (IOException e) {
            log.debug("link {} could not write", writer.getName(), e);
            shutdown();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void writePacket(Packet p) throws IOException {
        ByteBuffer data = p.data();
        room(PACKET_HEADER);
        out.put((byte) 0).put((byte) p.kind().ordinal()).putLong(p.psn()).put((byte) p.opcode()).putInt(p.flags())
                .putInt(p.immData()).putLong(p.remoteAddress()).putInt(p.rkey()).putInt(p.length())
                .putLong(p.compareAdd()).putLong(p.swap()).putLong(p.status()).put((byte) p.port())
                .putInt(data == null ? -1 : data.remaining());
        if (data != null) {
            writeBytes(data);
        }
    }

    private Packet readPacket() throws IOException {
        need(PACKET_HEADER - 1);
        Packet.Kind kind = Packet.KINDS[in.get()];
        long psn = in.getLong();
        int opcode = in.get();
        int flags = in.getInt();
        int imm = in.getInt();
        long remoteAddress = in.getLong();
        int rkey = in.getInt();
        int length = in.getInt();
        long compareAdd = in.getLong();
        long swap = in.getLong();
        long status = in.getLong();
        int port = in.get();
        int n = in.getInt();
        ByteBuffer data = null;
        if (n > in.capacity()) {
            byte[] large = new byte[n];
            readBytes(large);
            data = ByteBuffer.wrap(large);
        } else if (n >= 0) {
            // a view of the input buffer: the payload goes from the socket to its MR in one copy
            need(n);
            data = in.slice(in.position(), n);
            in.position(in.position() + n);
        }
        return new Packet(kind, psn, opcode, flags, imm, remoteAddress, rkey, length, compareAdd, swap, status, port,
                data);
    }

    private void writeCm(CmMessage m) throws IOException {
        room(1 + 1 + 4 + 8 + 16 + 4 + 4 + 2);
        out.put((byte) 1).put((byte) m.type().ordinal()).putInt(m.qpn()).putLong(m.psn()).put(m.gid())
                .putInt(m.port()).putInt(m.status()).putShort((short) m.privateData().length);
        writeBytes(ByteBuffer.wrap(m.privateData()));
        writeAddress(m.source());
        writeAddress(m.destination());
    }

    private CmMessage readCm() throws IOException {
        need(1 + 4 + 8 + 16 + 4 + 4 + 2);
        CmMessage.Type type = CmMessage.Type.values()[in.get()];
        int qpn = in.getInt();
        long psn = in.getLong();
        byte[] gid = new byte[16];
        in.get(gid);
        int port = in.getInt();
        int status = in.getInt();
        byte[] privateData = new byte[Short.toUnsignedInt(in.getShort())];
        readBytes(privateData);
        return new CmMessage(type, qpn, psn, gid, port, status, privateData, readAddress(), readAddress());
    }

    private void writeAddress(InetSocketAddress a) throws IOException {
        if (a == null) {
            room(1);
            out.put((byte) 0);
            return;
        }
        byte[] ip = a.getAddress().getAddress();
        room(1 + ip.length + 4);
        out.put((byte) ip.length).put(ip).putInt(a.getPort());
    }

    private InetSocketAddress readAddress() throws IOException {
        int n = readByte();
        if (n == 0) {
            return null;
        }
        byte[] ip = new byte[n];
        readBytes(ip);
        need(4);
        return new InetSocketAddress(InetAddress.getByAddress(ip), in.getInt());
    }

    // ---------------------------------------------------------------- buffered channel I/O

    /** Makes room for {@code n} more bytes in the output buffer (n is at most its capacity). */
    private void room(int n) throws IOException {
        if (out.remaining() < n) {
            flush();
        }
    }

    /** Writes the bytes from the position to the limit, leaving the buffer as it was. */
    private void writeBytes(ByteBuffer bytes) throws IOException {
        int n = bytes.remaining();
        if (n > out.capacity() || (bytes.isDirect() && n >= DIRECT_PAYLOAD)) {
            // too large to stage, or in registered memory: after what out holds, straight to the socket
            out.flip();
            ByteBuffer[] both = {out, bytes.duplicate()};
            while (both[0].hasRemaining() || both[1].hasRemaining()) {
                channel.write(both);
            }
            out.clear();
            return;
        }
        room(n);
        out.put(out.position(), bytes, bytes.position(), n);
        out.position(out.position() + n);
    }

    private void flush() throws IOException {
        out.flip();
        while (out.hasRemaining()) {
            channel.write(out);
        }
        out.clear();
    }

    /** Reads until at least {@code n} bytes (at most the buffer's capacity) wait in the input buffer. */
    private void need(int n) throws IOException {
        if (in.remaining() >= n) {
            return;
        }
        in.compact();
        try {
            while (in.position() < n) {
                if (channel.read(in) < 0) {
                    throw new EOFException();
                }
            }
        } finally {
            in.flip();
        }
    }

    private int readByte() throws IOException {
        need(1);
        return in.get();
    }

    private void readBytes(byte[] into) throws IOException {
        int offset = 0;
        while (offset < into.length) {
            need(Math.min(into.length - offset, in.capacity()));
            int chunk = Math.min(into.length - offset, in.remaining());
            in.get(into, offset, chunk);
            offset += chunk;
        }
    }

    private void shutdown() {
        if (!closed) {
            closed = true;
            outbox.add(CLOSE);
        }
        try {
            socket.close();
        } catch (IOException e) {
            log.debug("closing link socket", e);
        }
        fabric.untrack(this);
    }

    /** Closes the link after the frames already queued are written; the peer sees the connection end. */
    void close() {
        if (closed) {
            return;
        }
        closed = true;
        outbox.add(CLOSE);
        try {
            writer.join(1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        shutdown();
        if (Thread.currentThread() != reader) {
            try {
                reader.join(1000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Ends the link at once, as a process that dies does. */
    void abort() {
        closed = true;
        outbox.clear();
        outbox.add(CLOSE);
        shutdown();
    }
}
