package io.rdmaactors.soft;

/**
 * The link tests over shared memory: the client's ids reach the server's listener over a link
 * whose frames go through a ring in a file both map, and whose socket carries only doorbells. The
 * tests that speak to the listener over a raw socket still do so over TCP: a peer that offers no
 * shared memory gets a TCP link.
 */
class SharedMemoryLinkTest extends TcpLinkTest {

    @Override
    String transport() {
        return "shm";
    }
}
