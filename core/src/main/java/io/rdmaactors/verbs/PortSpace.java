package io.rdmaactors.verbs;

/** RDMA CM port spaces ({@code enum rdma_port_space}): TCP for RC connections, UDP for UD. */
public enum PortSpace {
    TCP(0x0106),
    UDP(0x0111),
    IB(0x013F),
    IPOIB(0x0002);

    private final int code;

    PortSpace(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }
}
