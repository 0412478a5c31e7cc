package io.rdmaactors.verbs;

/** A shared receive queue ({@code ibv_srq}) that several QPs take their receives from. */
public interface SharedReceiveQueue extends AutoCloseable {

    long handle();

    void postReceive(ReceiveWorkRequest... requests);

    /**
     * Arms the limit: when fewer than {@code limit} receives remain posted, one
     * {@code SRQ_LIMIT_REACHED} async event fires and the limit disarms ({@code ibv_modify_srq}).
     */
    void armLimit(int limit);

    /** Receives currently posted and not yet consumed. */
    int posted();

    int maxWr();

    /** Fails with {@link ResourceBusyException} while a QP is attached. */
    @Override
    void close();
}
