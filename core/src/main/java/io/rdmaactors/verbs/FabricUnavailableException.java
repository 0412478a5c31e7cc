package io.rdmaactors.verbs;

/** A provider cannot be opened on this machine: its native libraries or devices are missing. */
public class FabricUnavailableException extends VerbsException {

    public FabricUnavailableException(String call, String message, Throwable cause) {
        super(call, ENODEV, message, cause);
    }
}
