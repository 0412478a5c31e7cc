package io.rdmaactors.soft.link;

/**
 * What the links between processes take from the fabric's options (read by the soft fabric's
 * {@code SoftOptions}, which names each key in its errors).
 *
 * @param ioThreads          selector threads serving every link and listener ({@code io.threads})
 * @param cookie             the cookie file, {@code off}, or null for {@link LinkCookie#defaultPath()} ({@code cookie})
 * @param handshakeTimeoutMs how long an accepted link may take to prove it knows the cookie
 *                           ({@code links.handshake.timeout.ms})
 * @param maxPending         accepted links still in their handshake, at most ({@code links.pending})
 * @param maxPerListener     links one listener serves, at most ({@code links.max})
 * @param sharedMemory       whether a link to a process of this host goes through shared memory
 *                           ({@code transport} other than {@code tcp})
 * @param ringBytes          each direction's ring in that memory ({@code links.shm.bytes})
 */
public record LinkOptions(int ioThreads, String cookie, long handshakeTimeoutMs, int maxPending, int maxPerListener,
                          boolean sharedMemory, int ringBytes) {
}
