package io.rdmaactors.jna;

import com.sun.jna.Pointer;
import io.rdmaactors.verbs.InvalidRequestException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** {@code struct sockaddr_in}/{@code sockaddr_in6} to and from Java socket addresses. */
final class SocketAddresses {

    private static final short AF_INET = 2;
    private static final short AF_INET6 = 10;

    private SocketAddresses() {
    }

    static byte[] encode(InetSocketAddress address, String call) {
        if (address == null) {
            return null;
        }
        if (address.isUnresolved()) {
            throw new InvalidRequestException(call, "unresolved address " + address);
        }
        InetAddress ip = address.getAddress();
        boolean v4 = ip instanceof Inet4Address;
        ByteBuffer b = ByteBuffer.allocate(v4 ? 16 : 28).order(ByteOrder.nativeOrder());
        b.putShort(v4 ? AF_INET : AF_INET6);
        b.order(ByteOrder.BIG_ENDIAN).putShort((short) address.getPort());
        if (!v4) {
            b.putInt(0);
        }
        b.put(ip.getAddress());
        return b.array();
    }

    static InetSocketAddress decode(long sockaddr) {
        if (sockaddr == 0) {
            return null;
        }
        Pointer p = new Pointer(sockaddr);
        short family = p.getShort(0);
        int port = (p.getByte(2) & 0xff) << 8 | (p.getByte(3) & 0xff);
        try {
            if (family == AF_INET) {
                return new InetSocketAddress(InetAddress.getByAddress(p.getByteArray(4, 4)), port);
            }
            if (family == AF_INET6) {
                return new InetSocketAddress(InetAddress.getByAddress(p.getByteArray(8, 16)), port);
            }
        } catch (UnknownHostException e) {
            throw new IllegalStateException("a raw address cannot be unknown", e);
        }
        return null;
    }
}
