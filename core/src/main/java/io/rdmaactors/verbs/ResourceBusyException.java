package io.rdmaactors.verbs;

/** The resource is still in use by another (a CQ by a QP, a PD by an MR, a CQ with unacknowledged events). */
public class ResourceBusyException extends VerbsException {

    public ResourceBusyException(String call, String message) {
        super(call, EBUSY, message);
    }
}
