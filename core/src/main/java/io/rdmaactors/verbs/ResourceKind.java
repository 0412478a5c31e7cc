package io.rdmaactors.verbs;

/** The kinds of resource the {@link ResourceLedger} counts. */
public enum ResourceKind {
    EVENT_CHANNEL,
    CM_ID,
    PROTECTION_DOMAIN,
    MEMORY_REGION,
    MEMORY_WINDOW,
    COMPLETION_CHANNEL,
    COMPLETION_QUEUE,
    QUEUE_PAIR,
    SHARED_RECEIVE_QUEUE,
    ADDRESS_HANDLE,
    MULTICAST_MEMBERSHIP,
    /**
     * A soft fabric link to another process (a socket, its buffers and its share of an I/O thread),
     * counted while a connection is on it or its handshake is under way.
     */
    LINK
}
