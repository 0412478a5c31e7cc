package io.rdmaactors.soft;

import java.net.InetSocketAddress;

/**
 * An IB CM message between soft CM ids: REQ, REP, RTU, REJ, DREQ, DREP.
 *
 * @param qpn    the sender's QP number (REQ, REP)
 * @param psn    the sender's starting PSN (REQ, REP)
 * @param port   the sender's port; with {@code gid}, the path to reach it
 * @param status the reject reason (REJ)
 */
record CmMessage(Type type, int qpn, long psn, byte[] gid, int port, int status, byte[] privateData,
                 InetSocketAddress source, InetSocketAddress destination) {

    enum Type { REQ, REP, RTU, REJ, DREQ, DREP }

    static CmMessage of(Type type) {
        return new CmMessage(type, 0, 0, new byte[16], 0, 0, new byte[0], null, null);
    }

    static CmMessage reject(int status, byte[] privateData) {
        return new CmMessage(Type.REJ, 0, 0, new byte[16], 0, status, privateData, null, null);
    }
}
