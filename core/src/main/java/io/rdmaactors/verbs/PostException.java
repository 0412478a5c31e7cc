package io.rdmaactors.verbs;

/**
 * A post refused one work request of a list ({@code bad_wr}): those before {@link #failedIndex()}
 * were posted and will complete; it and those after it were not.
 */
public class PostException extends VerbsException {

    private final int failedIndex;

    public PostException(VerbsException cause, int failedIndex) {
        super(cause.call(), cause.errno(), cause.getMessage() + " [work request " + failedIndex + "]", cause);
        this.failedIndex = failedIndex;
    }

    public int failedIndex() {
        return failedIndex;
    }

    /** The typed failure: a full queue, a QP in the wrong state, a bad argument. */
    public VerbsException reason() {
        return (VerbsException) getCause();
    }
}
