package io.rdmaactors.verbs;

/** An argument breaks a verbs rule: a buffer that is not direct, private data over the CM limit, an SGE outside its memory region. */
public class InvalidRequestException extends VerbsException {

    public InvalidRequestException(String call, String message) {
        super(call, EINVAL, message);
    }
}
