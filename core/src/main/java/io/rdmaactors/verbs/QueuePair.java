package io.rdmaactors.verbs;

/**
 * A queue pair ({@code ibv_qp}). Every posted work request ends in exactly one completion on its
 * CQ (unsignaled successful sends excepted, as in verbs), or, when the QP enters ERR, in a
 * {@link WcStatus#WR_FLUSH_ERR} completion.
 */
public interface QueuePair extends AutoCloseable {

    int qpNum();

    QpType type();

    QpState state();

    void modify(QpAttributes attributes);

    QpAttributes query();

    /**
     * The attributes the QP was created with, its capacities as granted: at least those asked for
     * (devices round queues up, as {@code ibv_create_qp} reports). The send queue refuses a post
     * beyond {@link QpInitAttributes#maxSendWr()} outstanding sends, a send being outstanding until
     * its completion, or a later signaled one, is polled.
     */
    QpInitAttributes initAttributes();

    /**
     * Posts send work requests in order ({@code ibv_post_send}). When one is refused, those before
     * it stay posted and the exception tells which index failed. As with verbs, the array is the
     * caller's again on return: providers keep none of it.
     */
    void postSend(SendWorkRequest... requests);

    /** Posts receive work requests in order ({@code ibv_post_recv}); the array too is the caller's again on return. */
    void postReceive(ReceiveWorkRequest... requests);

    /** Attaches this UD QP to a multicast group ({@code ibv_attach_mcast}). */
    void attachMulticast(byte[] mgid, int mlid);

    void detachMulticast(byte[] mgid, int mlid);

    /** Destroys the QP; outstanding work requests are flushed first, so none is lost. */
    @Override
    void close();
}
