package io.rdmaactors.soft.wire;

import io.rdmaactors.verbs.ConnectionParameters;
import java.net.InetSocketAddress;

/**
 * An IB CM message between soft CM ids: REQ, REP, RTU, REJ, DREQ, DREP, and the MRA with which a
 * passive side acknowledges a REQ its application has not answered yet.
 *
 * @param qpn                the sender's QP number (REQ, REP)
 * @param psn                the sender's starting PSN (REQ, REP)
 * @param port               the sender's port; with {@code gid}, the path to reach it
 * @param status             the reject reason (REJ)
 * @param responderResources the reads and atomics the sender's QP answers at once (REQ, REP)
 * @param initiatorDepth     the reads and atomics the sender's QP keeps outstanding (REQ, REP)
 * @param retryCount         the transport retries the connection takes (REQ; the IB CM's REP has none)
 * @param rnrRetryCount      the RNR retries the sender asks of the peer's QP (REQ, REP)
 */
public record CmMessage(Type type, int qpn, long psn, byte[] gid, int port, int status, int responderResources,
                 int initiatorDepth, int retryCount, int rnrRetryCount, byte[] privateData,
                 InetSocketAddress source, InetSocketAddress destination) {

    /** In link frame order: a new type goes last. */
    public enum Type { REQ, REP, RTU, REJ, DREQ, DREP, MRA }

    public static CmMessage of(Type type) {
        return new CmMessage(type, 0, 0, new byte[16], 0, 0, 0, 0, 0, 0, new byte[0], null, null);
    }

    public static CmMessage reject(int status, byte[] privateData) {
        return new CmMessage(Type.REJ, 0, 0, new byte[16], 0, status, 0, 0, 0, 0, privateData, null, null);
    }

    /** A REQ or REP: the sender's QP, where it starts, and the parameters it connects or accepts with. */
    public static CmMessage connecting(Type type, int qpn, long psn, byte[] gid, int portNum,
                                ConnectionParameters parameters, InetSocketAddress source,
                                InetSocketAddress destination) {
        return new CmMessage(type, qpn, psn, gid, portNum, 0, parameters.responderResources(),
                parameters.initiatorDepth(), parameters.retryCount(), parameters.rnrRetryCount(),
                parameters.privateData(), source, destination);
    }
}
