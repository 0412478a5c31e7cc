package io.rdmaactors.verbs;

import java.util.List;

/** A receive work request ({@code struct ibv_recv_wr}): where the next incoming message lands. */
public record ReceiveWorkRequest(long wrId, List<ScatterGatherElement> sgList) {

    public ReceiveWorkRequest {
        sgList = List.copyOf(sgList);
    }

    public static ReceiveWorkRequest of(long wrId, ScatterGatherElement... sge) {
        return new ReceiveWorkRequest(wrId, List.of(sge));
    }

    public long totalLength() {
        long total = 0;
        for (ScatterGatherElement sge : sgList) {
            total += sge.length();
        }
        return total;
    }
}
