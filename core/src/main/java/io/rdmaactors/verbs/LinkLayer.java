package io.rdmaactors.verbs;

/** What a port runs on: InfiniBand, or Ethernet (RoCE). */
public enum LinkLayer {
    UNSPECIFIED,
    INFINIBAND,
    ETHERNET
}
