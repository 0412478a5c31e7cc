package io.rdmaactors.soft.link;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The data path of a link between two processes of one host: a file both map, owner-only, holding
 * a {@link LinkRing} each way; the link's socket stays for the handshake, the doorbells and the
 * peer's liveness (its end is the process's). The connecting side creates the file under a name
 * nobody can guess and offers it in the cookie handshake ({@link LinkHandshake}); the accepting
 * side maps it and deletes it at once, so that the memory goes with the two processes. A process
 * killed in the moment between leaves a file behind, which the next link to be created deletes
 * (links are made once per pair of processes, so the look costs little), since its name carries
 * the pid of its creator.
 */
public final class LinkSharedMemory {

    private static final Logger log = LoggerFactory.getLogger(LinkSharedMemory.class);
    private static final String PREFIX = "rdma-actors-link-";
    private static final Pattern NAME = Pattern.compile(Pattern.quote(PREFIX) + "(\\d{1,18})-[0-9a-f]{32}");
    private static final SecureRandom RANDOM = new SecureRandom();

    /** What the connecting side writes to: the accepting side's ring to read. */
    final LinkRing toAcceptor;
    final LinkRing toConnector;
    private final boolean connecting;

    private LinkSharedMemory(MappedByteBuffer memory, int ringBytes, boolean connecting) {
        int ring = LinkRing.HEADER + ringBytes;
        this.toAcceptor = new LinkRing(memory.slice(0, ring));
        this.toConnector = new LinkRing(memory.slice(ring, ring));
        this.connecting = connecting;
    }

    /** The ring this side writes to. */
    LinkRing out() {
        return connecting ? toAcceptor : toConnector;
    }

    /** The ring this side reads. */
    LinkRing in() {
        return connecting ? toConnector : toAcceptor;
    }

    /** What the offer in the handshake names: the creator's pid, a random id and each ring's bytes. */
    public record Offer(long pid, byte[] id, int ringBytes) {
        static final int BYTES = 8 + 16 + 4;
    }

    /** An offer with the file it names, on the connecting side until the handshake is over. */
    public record Offered(Offer offer, Path file, LinkSharedMemory memory) {
        /** The handshake is over: the name goes, whether the peer mapped the file or not. */
        public void unlink() {
            delete(file);
        }
    }

    /** Deletes a link's file if it is still there; a file that cannot go is the next sweep's. */
    private static void delete(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            log.debug("deleting {}", file, e);
        }
    }

    /** Where the files are made: memory, where the host has a tmpfs for it. */
    private static Path directory() {
        Path shm = Path.of("/dev/shm");
        return Files.isDirectory(shm) && Files.isWritable(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir"));
    }

    private static Path file(long pid, byte[] id) {
        return directory().resolve(PREFIX + pid + "-" + HexFormat.of().formatHex(id));
    }

    /** Whether a listener at this address runs on this host: a loopback address or one of its interfaces'. */
    public static boolean onThisHost(InetAddress address) {
        try {
            return address.isLoopbackAddress() || address.isAnyLocalAddress()
                    || NetworkInterface.getByInetAddress(address) != null;
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * The connecting side of the link to {@code peer}: a new file to offer, or null where none can
     * be made (the link is TCP then).
     */
    public static Offered create(int ringBytes, InetSocketAddress peer) {
        sweep();
        byte[] id = new byte[16];
        RANDOM.nextBytes(id);
        long pid = ProcessHandle.current().pid();
        Path file = file(pid, id);
        try {
            Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        } catch (IOException | UnsupportedOperationException e) {
            log.debug("no shared memory for the link to {}: {}", peer, e.toString());
            return null;
        }
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            reserve(channel, size(ringBytes));
            MappedByteBuffer memory = channel.map(FileChannel.MapMode.READ_WRITE, 0, size(ringBytes));
            LinkSharedMemory shared = new LinkSharedMemory(memory, ringBytes, true);
            // nobody reads yet: the first frame each way rings its reader's doorbell
            shared.toAcceptor.armReader();
            shared.toConnector.armReader();
            return new Offered(new Offer(pid, id, ringBytes), file, shared);
        } catch (IOException | RuntimeException e) {
            log.warn("no shared memory for the link to {} ({}): it goes over TCP", peer, e.toString());
            delete(file);
            return null;
        }
    }

    /**
     * Writes the whole file, so that its memory is taken now. A mapped page that the file system
     * has no room for (a full {@code /dev/shm}) faults at its first write, in the middle of a frame;
     * here the write fails instead, and the link goes over TCP.
     */
    private static void reserve(FileChannel channel, long size) throws IOException {
        ByteBuffer zeros = ByteBuffer.allocate((int) Math.min(size, 64 << 10));
        for (long at = 0; at < size; ) {
            at += channel.write(zeros.clear().limit((int) Math.min(zeros.capacity(), size - at)), at);
        }
    }

    /**
     * The accepting side: maps the file the offer names and deletes it; null where it cannot (the
     * peer is on another host or another user's, or the file is not what the offer says).
     */
    public static LinkSharedMemory open(Offer offer) {
        if (offer.ringBytes() < 1 || Integer.bitCount(offer.ringBytes()) != 1 || offer.ringBytes() > 1 << 30) {
            return null;
        }
        Path file = file(offer.pid(), offer.id());
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE,
                LinkOption.NOFOLLOW_LINKS)) {
            if (channel.size() != size(offer.ringBytes())) {
                return null;
            }
            MappedByteBuffer memory = channel.map(FileChannel.MapMode.READ_WRITE, 0, size(offer.ringBytes()));
            return new LinkSharedMemory(memory, offer.ringBytes(), false);
        } catch (IOException | RuntimeException e) {
            log.debug("the peer's shared memory {} cannot be mapped: {}", file, e.toString());
            return null;
        } finally {
            delete(file);
        }
    }

    private static long size(int ringBytes) {
        return 2L * (LinkRing.HEADER + ringBytes);
    }

    /** Deletes the files whose creator is no longer running. */
    private static void sweep() {
        try (DirectoryStream<Path> files = Files.newDirectoryStream(directory(), PREFIX + "*")) {
            for (Path f : files) {
                Matcher m = NAME.matcher(f.getFileName().toString());
                if (m.matches() && ProcessHandle.of(Long.parseLong(m.group(1))).isEmpty()) {
                    Files.deleteIfExists(f);
                }
            }
        } catch (IOException | RuntimeException e) {
            log.debug("sweeping stale link files", e);
        }
    }
}
