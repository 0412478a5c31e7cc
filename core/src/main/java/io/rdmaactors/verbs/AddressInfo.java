package io.rdmaactors.verbs;

import java.net.InetSocketAddress;

/**
 * One answer of {@link Fabric#addressInfo} ({@code struct rdma_addrinfo}): where to bind and
 * listen (passive), or where to connect and from where, when the provider knows the route.
 *
 * @param source      the local address (passive: the one to bind), or null
 * @param destination the remote address to connect to, or null for a passive answer
 */
public record AddressInfo(InetSocketAddress source, InetSocketAddress destination, PortSpace portSpace,
                          QpType qpType) {
}
