package io.rdmaactors.verbs;

/**
 * {@code struct rdma_conn_param}. Private data is limited by the IB CM: 56 bytes on connect,
 * 196 on accept, 148 on reject, 180 for a UD request.
 */
public record ConnectionParameters(byte[] privateData, int responderResources, int initiatorDepth,
                                   int retryCount, int rnrRetryCount) {

    public static final int MAX_CONNECT_PRIVATE_DATA = 56;
    public static final int MAX_ACCEPT_PRIVATE_DATA = 196;
    public static final int MAX_REJECT_PRIVATE_DATA = 148;
    public static final int MAX_UD_PRIVATE_DATA = 180;

    public ConnectionParameters {
        privateData = privateData == null ? new byte[0] : privateData.clone();
    }

    public static ConnectionParameters of(byte[] privateData) {
        return new ConnectionParameters(privateData, 16, 16, 7, 7);
    }

    @Override
    public byte[] privateData() {
        return privateData.clone();
    }
}
