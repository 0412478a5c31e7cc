package io.rdmaactors.verbs;

/** A work queue or a completion queue has no room: the caller must wait for completions. */
public class QueueFullException extends VerbsException {

    public QueueFullException(String call, String message) {
        super(call, ENOMEM, message);
    }
}
