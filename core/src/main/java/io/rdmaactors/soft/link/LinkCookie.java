package io.rdmaactors.soft.link;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.Set;

/**
 * The secret that processes of one user share, as Erlang's {@code ~/.erlang.cookie}: a file only
 * its owner can read, created with 32 random bytes when missing. Links between processes prove
 * they know it ({@link LinkHandshake}); a process that cannot read it cannot connect.
 */
public final class LinkCookie {

    /** Fabric option {@code cookie}: this file's path, or {@code off} (every peer that speaks the handshake is let in). */
    public static final String OPTION = "cookie";
    public static final String OFF = "off";
    private static final Set<PosixFilePermission> OWNER_ONLY = EnumSet.of(PosixFilePermission.OWNER_READ,
            PosixFilePermission.OWNER_WRITE);

    private LinkCookie() {
    }

    public static Path defaultPath() {
        return Path.of(System.getProperty("user.home"), ".rdma-actors-cookie");
    }

    /** The secret the option names: empty when it is {@code off}. */
    public static byte[] load(String option) throws IOException {
        if (OFF.equals(option)) {
            return new byte[0];
        }
        Path file = option == null ? defaultPath() : Path.of(option);
        if (!Files.exists(file)) {
            create(file);
        }
        checkPrivate(file);
        byte[] secret = Files.readString(file, StandardCharsets.US_ASCII).strip().getBytes(StandardCharsets.US_ASCII);
        if (secret.length < 16) {
            throw new IOException("the cookie " + file + " holds " + secret.length + " characters; at least 16 are needed");
        }
        return secret;
    }

    /**
     * Writes a new cookie beside the file and links it into place: another process creating it at
     * the same moment either wins (and this one reads its cookie) or loses, never half-written.
     */
    private static void create(Path file) throws IOException {
        Path dir = file.toAbsolutePath().getParent();
        Files.createDirectories(dir);
        byte[] random = new byte[32];
        new SecureRandom().nextBytes(random);
        Path draft = Files.createTempFile(dir, ".rdma-actors-cookie", ".new",
                PosixFilePermissions.asFileAttribute(OWNER_ONLY));
        try {
            Files.writeString(draft, HexFormat.of().formatHex(random) + "\n", StandardCharsets.US_ASCII);
            Files.createLink(file, draft);
        } catch (FileAlreadyExistsException raced) {
            // another process made it first: its cookie is the one
        } finally {
            Files.deleteIfExists(draft);
        }
    }

    /** A cookie others can read protects nothing: refuse it, as ssh refuses a readable key. */
    private static void checkPrivate(Path file) throws IOException {
        PosixFileAttributeView posix = Files.getFileAttributeView(file, PosixFileAttributeView.class);
        if (posix == null) {
            return; // no POSIX permissions on this file system: its ACLs are the user's to keep
        }
        Set<PosixFilePermission> permissions = posix.readAttributes().permissions();
        if (!OWNER_ONLY.containsAll(permissions)) {
            throw new IOException("the cookie " + file + " is " + PosixFilePermissions.toString(permissions)
                    + ": others may read or change it; make it rw------- (chmod 600)");
        }
    }
}
