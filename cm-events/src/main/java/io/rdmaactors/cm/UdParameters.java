package io.rdmaactors.cm;

/**
 * What a UD or multicast CM event carries ({@code struct rdma_ud_param}): the remote QP number and
 * Q_Key, and the address vector to build an address handle from.
 */
public record UdParameters(int qpNum, int qkey, AddressVector addressVector) {
}
