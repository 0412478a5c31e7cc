package io.rdmaactors.soft;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.concurrent.LinkedBlockingQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One RC connection between two processes: a TCP loopback socket carrying CM messages and
 * transport packets. A reader thread hands frames to the endpoint; a writer thread drains an
 * outbox, so a reader never blocks on a full socket (two readers waiting on each other's writes
 * would deadlock).
 */
final class TcpLink {

    private static final Logger log = LoggerFactory.getLogger(TcpLink.class);
    private static final Object CLOSE = new Object();

    /** Who a link delivers to: a listener until a REQ made an id, then that id. */
    interface Endpoint {
        void onCm(TcpLink link, CmMessage message);

        Packet onRequest(Packet request);

        void onResponse(Packet response);

        void onLinkClosed(TcpLink link);
    }

    private final SoftFabric fabric;
    private final Socket socket;
    private final DataInputStream in;
    private final DataOutputStream out;
    private final LinkedBlockingQueue<Object> outbox = new LinkedBlockingQueue<>();
    private final Thread reader;
    private final Thread writer;
    private volatile Endpoint endpoint;
    private volatile boolean closed;
    /** Fault injection: frames are silently lost both ways. */
    volatile boolean dropped;

    TcpLink(SoftFabric fabric, Socket socket, Endpoint endpoint) throws IOException {
        this.fabric = fabric;
        this.socket = socket;
        this.endpoint = endpoint;
        socket.setTcpNoDelay(true);
        // larger than a 64 KiB message plus its header, so a packet leaves in one write
        this.in = new DataInputStream(new BufferedInputStream(socket.getInputStream(), 1 << 18));
        this.out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream(), 1 << 18));
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
                int tag = in.readByte();
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
                        out.flush();
                        return;
                    }
                    if (frame instanceof Packet p) {
                        writePacket(p);
                    } else {
                        writeCm((CmMessage) frame);
                    }
                    frame = outbox.poll();
                } while (frame != null);
                out.flush();
            }
        } catch (IOException e) {
            log.debug("link {} could not write", writer.getName(), e);
            shutdown();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void writePacket(Packet p) throws IOException {
        out.writeByte(0);
        out.writeByte(p.kind().ordinal());
        out.writeLong(p.psn());
        out.writeByte(p.opcode());
        out.writeInt(p.flags());
        out.writeInt(p.immData());
        out.writeLong(p.remoteAddress());
        out.writeInt(p.rkey());
        out.writeInt(p.length());
        out.writeLong(p.compareAdd());
        out.writeLong(p.swap());
        out.writeLong(p.status());
        out.writeByte(p.port());
        byte[] data = p.data();
        out.writeInt(data == null ? -1 : data.length);
        if (data != null) {
            out.write(data);
        }
    }

    private Packet readPacket() throws IOException {
        Packet.Kind kind = Packet.KINDS[in.readByte()];
        long psn = in.readLong();
        int opcode = in.readByte();
        int flags = in.readInt();
        int imm = in.readInt();
        long remoteAddress = in.readLong();
        int rkey = in.readInt();
        int length = in.readInt();
        long compareAdd = in.readLong();
        long swap = in.readLong();
        long status = in.readLong();
        int port = in.readByte();
        int n = in.readInt();
        byte[] data = null;
        if (n >= 0) {
            data = new byte[n];
            in.readFully(data);
        }
        return new Packet(kind, psn, opcode, flags, imm, remoteAddress, rkey, length, compareAdd, swap, status, port,
                data);
    }

    private void writeCm(CmMessage m) throws IOException {
        out.writeByte(1);
        out.writeByte(m.type().ordinal());
        out.writeInt(m.qpn());
        out.writeLong(m.psn());
        out.write(m.gid());
        out.writeInt(m.port());
        out.writeInt(m.status());
        out.writeShort(m.privateData().length);
        out.write(m.privateData());
        writeAddress(m.source());
        writeAddress(m.destination());
    }

    private CmMessage readCm() throws IOException {
        CmMessage.Type type = CmMessage.Type.values()[in.readByte()];
        int qpn = in.readInt();
        long psn = in.readLong();
        byte[] gid = new byte[16];
        in.readFully(gid);
        int port = in.readInt();
        int status = in.readInt();
        byte[] privateData = new byte[in.readUnsignedShort()];
        in.readFully(privateData);
        return new CmMessage(type, qpn, psn, gid, port, status, privateData, readAddress(), readAddress());
    }

    private void writeAddress(InetSocketAddress a) throws IOException {
        if (a == null) {
            out.writeByte(0);
            return;
        }
        byte[] ip = a.getAddress().getAddress();
        out.writeByte(ip.length);
        out.write(ip);
        out.writeInt(a.getPort());
    }

    private InetSocketAddress readAddress() throws IOException {
        int n = in.readByte();
        if (n == 0) {
            return null;
        }
        byte[] ip = new byte[n];
        in.readFully(ip);
        return new InetSocketAddress(InetAddress.getByAddress(ip), in.readInt());
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
