package io.rdmaactors.cm;

import java.net.InetAddress;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * An address vector ({@code struct ibv_ah_attr}): where a UD datagram or a connection path goes.
 * The GID is copied in and out, so instances are immutable.
 */
public record AddressVector(byte[] dgid, int dlid, int serviceLevel, int portNum, int hopLimit,
                            int trafficClass, int flowLabel, int sgidIndex, boolean global) {

    public AddressVector {
        if (dgid == null || dgid.length != 16) {
            throw new IllegalArgumentException("a GID is 16 bytes");
        }
        dgid = dgid.clone();
    }

    /** The IPv4-mapped GID {@code ::ffff:a.b.c.d}, as RoCE forms GID index 0 from a port's IPv4 address. */
    public static byte[] ipv4MappedGid(InetAddress ipv4) {
        byte[] gid = new byte[16];
        gid[10] = (byte) 0xff;
        gid[11] = (byte) 0xff;
        System.arraycopy(ipv4.getAddress(), 0, gid, 12, 4);
        return gid;
    }

    /** A global (GRH) address vector to a GID on a local port, as RoCE needs. */
    public static AddressVector global(byte[] dgid, int portNum) {
        return new AddressVector(dgid, 0, 0, portNum, 64, 0, 0, 0, true);
    }

    @Override
    public byte[] dgid() {
        return dgid.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof AddressVector a && Arrays.equals(dgid, a.dgid) && dlid == a.dlid
                && serviceLevel == a.serviceLevel && portNum == a.portNum && hopLimit == a.hopLimit
                && trafficClass == a.trafficClass && flowLabel == a.flowLabel
                && sgidIndex == a.sgidIndex && global == a.global;
    }

    @Override
    public int hashCode() {
        return 31 * Arrays.hashCode(dgid) + dlid * 7 + portNum;
    }

    @Override
    public String toString() {
        return "AddressVector[dgid=" + HexFormat.of().formatHex(dgid) + ", dlid=" + dlid + ", port=" + portNum
                + (global ? ", global" : "") + "]";
    }
}
