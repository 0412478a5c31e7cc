package io.rdmaactors.verbs;

/** Every work completion status ({@code enum ibv_wc_status}), in native order. */
public enum WcStatus {
    SUCCESS("success"),
    LOC_LEN_ERR("local length error: a message longer than the receive's buffers, or than the port's limit"),
    LOC_QP_OP_ERR("local QP operation error: the request was inconsistent with the QP"),
    LOC_EEC_OP_ERR("local EE context operation error"),
    LOC_PROT_ERR("local protection error: an SGE outside a region of the QP's PD, or without the local right"),
    WR_FLUSH_ERR("flushed: the QP entered the error state before the request completed"),
    MW_BIND_ERR("memory window bind error"),
    BAD_RESP_ERR("bad response: the responder answered with an unexpected transport opcode"),
    LOC_ACCESS_ERR("local access error: a READ's or atomic's response could not be written to the local buffer"),
    REM_INV_REQ_ERR("remote invalid request: the responder refused the request (no responder resources,"
            + " an opcode it does not take, a message longer than it accepts)"),
    REM_ACCESS_ERR("remote access error: the responder refused the rkey, the range or the right (a key it"
            + " did not give, an address past the region, a region without the right)"),
    REM_OP_ERR("remote operation error: the responder could not complete the request"),
    RETRY_EXC_ERR("transport retries exceeded: no answer from the peer within the timeout, retry count times"),
    RNR_RETRY_EXC_ERR("receiver-not-ready retries exceeded: the peer posted no receive in time"),
    LOC_RDD_VIOL_ERR("local RDD violation"),
    REM_INV_RD_REQ_ERR("remote invalid RD request"),
    REM_ABORT_ERR("remote abort: the responder aborted the operation"),
    INV_EECN_ERR("invalid EE context number"),
    INV_EEC_STATE_ERR("invalid EE context state"),
    FATAL_ERR("fatal error of the device"),
    RESP_TIMEOUT_ERR("response timeout"),
    GENERAL_ERR("general error"),
    TM_ERR("tag matching error"),
    TM_RNDV_INCOMPLETE("tag matching rendezvous incomplete");

    private final String description;

    WcStatus(String description) {
        this.description = description;
    }

    /** What the status means, in words: for a failure that says what happened, not only its name. */
    public String description() {
        return description;
    }

    private static final WcStatus[] BY_CODE = values();

    public int code() {
        return ordinal();
    }

    /** The status for a native code; an unknown code reads as {@link #GENERAL_ERR}. */
    public static WcStatus fromCode(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : GENERAL_ERR;
    }
}
