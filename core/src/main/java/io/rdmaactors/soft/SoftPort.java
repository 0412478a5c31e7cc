package io.rdmaactors.soft;

import io.rdmaactors.cm.AddressVector;
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
        this.gid = AddressVector.ipv4MappedGid(address);
    }

    int lid() {
        return 16 * device.index + portNum;
    }

    boolean isUp() {
        return !cut && device.isAlive();
    }

    /** The multicast GID for an IPv4 group, as librdmacm maps one on RoCE. */
    static byte[] multicastGid(InetAddress group) {
        byte[] gid = AddressVector.ipv4MappedGid(group);
        gid[0] = (byte) 0xff;
        gid[1] = (byte) 0x0e;
        return gid;
    }
}
