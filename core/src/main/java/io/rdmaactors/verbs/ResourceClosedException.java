package io.rdmaactors.verbs;

/** The resource was closed (or its device removed) before this call. */
public class ResourceClosedException extends VerbsException {

    public ResourceClosedException(String call, String message) {
        super(call, EBADF, message);
    }
}
