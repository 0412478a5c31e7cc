package io.rdmaactors.verbs;

/** The device or its link layer cannot do this (APM on RoCE, an atomic on a device without atomics). */
public class NotSupportedException extends VerbsException {

    public NotSupportedException(String call, String message) {
        super(call, EOPNOTSUPP, message);
    }
}
