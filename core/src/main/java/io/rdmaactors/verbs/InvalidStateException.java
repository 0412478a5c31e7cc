package io.rdmaactors.verbs;

/** The call is not allowed in the resource's current state (a QP not ready to send, an id not yet resolved). */
public class InvalidStateException extends VerbsException {

    public InvalidStateException(String call, String message) {
        super(call, EINVAL, message);
    }
}
