package io.rdmaactors.verbs;

/** One piece of local memory a work request reads or fills ({@code struct ibv_sge}). */
public record ScatterGatherElement(long address, int length, int lkey) {

    public ScatterGatherElement {
        if (length < 0) {
            throw new InvalidRequestException("ibv_sge", "negative length " + length);
        }
    }
}
