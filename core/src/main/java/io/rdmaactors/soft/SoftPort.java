package io.rdmaactors.soft;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;

/** One port of a soft device: its IPv4 address 127.0.d.p, the GID mapped from it, its link state. */
final class SoftPort {

    final SoftDevice device;
    final int portNum;
    final Inet4Address address;
    final byte[] gid;
    /** Cut by fault injection: packets through the port are lost. */
    volatile boolean cut;

    SoftPort(SoftDevice device, int portNum) {
        this.device = device;
        this.portNum = portNum;
        try {
            this.address = (Inet4Address) InetAddress.getByAddress(
                    new byte[] {127, 0, (byte) device.index, (byte) portNum});
        } catch (UnknownHostException e) {
            throw new AssertionError(e);
        }
        this.gid = mappedGid(address);
    }

    int lid() {
        return 16 * device.index + portNum;
    }

    boolean isUp() {
        return !cut && device.isAlive();
    }

    /** The IPv4-mapped GID {@code ::ffff:a.b.c.d}, as RoCE v2 forms GID index 0. */
    static byte[] mappedGid(InetAddress ipv4) {
        byte[] gid = new byte[16];
        gid[10] = (byte) 0xff;
        gid[11] = (byte) 0xff;
        System.arraycopy(ipv4.getAddress(), 0, gid, 12, 4);
        return gid;
    }

    /** The multicast GID for an IPv4 group, as librdmacm maps one on RoCE. */
    static byte[] multicastGid(InetAddress group) {
        byte[] gid = mappedGid(group);
        gid[0] = (byte) 0xff;
        gid[1] = (byte) 0x0e;
        return gid;
    }
}
