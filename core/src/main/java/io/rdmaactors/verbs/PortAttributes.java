package io.rdmaactors.verbs;

import java.util.List;

/**
 * A port's attributes ({@code struct ibv_port_attr}) and its GID table.
 *
 * @param gids the valid GID table entries, index 0 first, 16 bytes each
 */
public record PortAttributes(int portNum, PortState state, Mtu maxMtu, Mtu activeMtu, int lid,
                             LinkLayer linkLayer, List<byte[]> gids) {

    public PortAttributes {
        gids = gids.stream().map(byte[]::clone).toList();
    }

    public byte[] gid(int index) {
        return gids.get(index).clone();
    }
}
