package io.rdmaactors.conformance;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaactors.cm.CmEvent;
import io.rdmaactors.verbs.AddressInfo;
import io.rdmaactors.verbs.CmId;
import io.rdmaactors.verbs.ConnectionParameters;
import io.rdmaactors.verbs.EventChannel;
import io.rdmaactors.verbs.InvalidRequestException;
import io.rdmaactors.verbs.MemoryRegion;
import io.rdmaactors.verbs.PortSpace;
import io.rdmaactors.verbs.QpAttributes;
import io.rdmaactors.verbs.QpState;
import io.rdmaactors.verbs.QpType;
import io.rdmaactors.verbs.ReceiveWorkRequest;
import io.rdmaactors.verbs.ResourceBusyException;
import io.rdmaactors.verbs.SendWorkRequest;
import io.rdmaactors.verbs.VerbsException;
import io.rdmaactors.verbs.WcStatus;
import io.rdmaactors.verbs.WorkCompletion;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.net.ServerSocket;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The communication manager: resolution, connection setup with private data, rejects, teardown. */
public abstract class CmConformance extends FabricConformance {

    private EventChannel serverEvents;
    private CmId listener;

    private void listen(int backlog) {
        serverEvents = opened(fabric.createEventChannel());
        listener = opened(fabric.createCmId(serverEvents, PortSpace.TCP));
        listener.bind(new InetSocketAddress("127.0.0.1", 0));
        listener.listen(backlog);
    }

    /**
     * No id takes the handle of one destroyed, though it may take its address: an event the
     * destroyed id had fetched and not yet routed must not reach the new one.
     */
    @Test
    void anIdNeverTakesTheHandleOfOneDestroyed() {
        EventChannel events = opened(fabric.createEventChannel());
        Set<Long> handles = new HashSet<>();
        for (int i = 0; i < 32; i++) {
            CmId id = fabric.createCmId(events, PortSpace.TCP);
            try {
                assertTrue(handles.add(id.handle()), "id " + i + " took the handle of an earlier one: " + id.handle());
                assertSame(id, events.cmId(id.handle()));
            } finally {
                id.close();
            }
        }
    }

    /** A resolved active id with its QP, on a channel of its own. */
    private CmId client(InetSocketAddress server) throws Exception {
        EventChannel events = opened(fabric.createEventChannel());
        CmId id = opened(fabric.createCmId(events, PortSpace.TCP));
        opened(Loopback.activeSide(id, server));
        return id;
    }

    /** The id a connect request names, with its QP. */
    private CmId agent(CmEvent.ConnectRequest request) {
        CmId agent = serverEvents.cmId(request.id());
        assertNotNull(agent, "channel.cmId of a connect request's id");
        opened(agent);
        opened(Loopback.passiveSide(agent));
        return agent;
    }

    private static byte[] data(int length, int seed) {
        return patternBytes(length, seed);
    }

    /** Private data as sent; a transport may pad it to its message's size with zeros. */
    private static void assertPrivateData(byte[] sent, byte[] received) {
        assertTrue(received.length >= sent.length, "private data cut to " + received.length + " bytes");
        assertArrayEquals(sent, Arrays.copyOf(received, sent.length));
        for (int i = sent.length; i < received.length; i++) {
            assertEquals(0, received[i], "padding byte " + i);
        }
    }

    @Test
    void passiveAddressInfoNamesWhereToListen() {
        List<AddressInfo> answers = fabric.addressInfo(null, "7471", true, PortSpace.TCP);
        assertFalse(answers.isEmpty());
        AddressInfo first = answers.get(0);
        assertEquals(new InetSocketAddress("0.0.0.0", 7471), first.source());
        assertNull(first.destination());
        assertEquals(PortSpace.TCP, first.portSpace());
        assertEquals(QpType.RC, first.qpType());
    }

    @Test
    void activeAddressInfoNamesTheDestination() {
        AddressInfo rc = fabric.addressInfo("127.0.0.1", "7471", false, PortSpace.TCP).get(0);
        assertEquals(new InetSocketAddress("127.0.0.1", 7471), rc.destination());
        assertEquals(QpType.RC, rc.qpType());
        AddressInfo ud = fabric.addressInfo("localhost", "7472", false, PortSpace.UDP).get(0);
        assertEquals(new InetSocketAddress("127.0.0.1", 7472), ud.destination());
        assertEquals(PortSpace.UDP, ud.portSpace());
        assertEquals(QpType.UD, ud.qpType());
    }

    @Test
    void addressInfoForAnUnknownServiceIsATypedError() {
        VerbsException e = assertThrows(VerbsException.class,
                () -> fabric.addressInfo("127.0.0.1", "no-such-rdma-service", false, PortSpace.TCP));
        assertEquals("rdma_getaddrinfo", e.call());
    }

    @Test
    void resolvingAnAddressOffTheFabricIsAnAddrError() throws Exception {
        EventChannel events = opened(fabric.createEventChannel());
        CmId id = opened(fabric.createCmId(events, PortSpace.TCP));
        id.resolveAddress(null, new InetSocketAddress("192.0.2.1", 7471), STEP);
        CmEvent.AddrError error = await(events, CmEvent.AddrError.class);
        assertEquals(id.handle(), error.id());
        assertEquals(-101, error.status(), "-ENETUNREACH");
    }

    @Test
    void connectingToAPortWithoutListenerIsRejectedAsInvalidServiceId() throws Exception {
        int port;
        try (ServerSocket free = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = free.getLocalPort();
        }
        CmId id = client(new InetSocketAddress("127.0.0.1", port));
        id.connect(ConnectionParameters.of(null));
        CmEvent.Rejected rejected = await(id.channel(), CmEvent.Rejected.class);
        assertEquals(id.handle(), rejected.id());
        assertEquals(CmEvent.Rejected.INVALID_SERVICE_ID, rejected.status());
    }

    @Test
    void privateDataTravelsBothWaysAndTheConnectionCarriesData() throws Exception {
        listen(4);
        CmId id = client(listener.localAddress());
        byte[] request = data(ConnectionParameters.MAX_CONNECT_PRIVATE_DATA, 1);
        id.connect(ConnectionParameters.of(request));

        CmEvent.ConnectRequest req = await(serverEvents, CmEvent.ConnectRequest.class);
        assertEquals(listener.handle(), req.listenId());
        assertPrivateData(request, req.privateData());
        CmId agent = agent(req);
        assertEquals(req.id(), agent.handle());
        assertSame(serverEvents, agent.channel());

        byte[] reply = data(ConnectionParameters.MAX_ACCEPT_PRIVATE_DATA, 2);
        agent.accept(ConnectionParameters.of(reply));
        CmEvent.Established established = await(id.channel(), CmEvent.Established.class);
        assertEquals(id.handle(), established.id());
        assertPrivateData(reply, established.privateData());
        assertEquals(agent.handle(), await(serverEvents, CmEvent.Established.class).id());
        assertEquals(QpState.RTS, id.queuePair().state());
        assertEquals(QpState.RTS, agent.queuePair().state());
    }

    /**
     * An application slower to answer a request than the CM's response timeout (2 s on the soft
     * fabric) still connects: the passive CM acknowledges the REQ with an MRA, which gives the
     * active side the longer service timeout, so the application's own timeouts decide.
     */
    @Test
    void anAcceptSlowerThanTheCmResponseTimeoutStillConnects() throws Exception {
        listen(4);
        CmId id = client(listener.localAddress());
        id.connect(ConnectionParameters.of(null));
        CmId agent = agent(await(serverEvents, CmEvent.ConnectRequest.class));
        assertNull(id.channel().await(Duration.ofMillis(3000)), "the active side waits for the answer");
        agent.accept(ConnectionParameters.of(null));
        await(id.channel(), CmEvent.Established.class);
        await(serverEvents, CmEvent.Established.class);
    }

    @Test
    void consumerRejectCarriesItsPrivateData() throws Exception {
        listen(4);
        CmId id = client(listener.localAddress());
        id.connect(ConnectionParameters.of(null));
        CmId agent = agent(await(serverEvents, CmEvent.ConnectRequest.class));
        byte[] reason = data(ConnectionParameters.MAX_REJECT_PRIVATE_DATA, 3);
        agent.reject(reason);
        CmEvent.Rejected rejected = await(id.channel(), CmEvent.Rejected.class);
        assertEquals(CmEvent.Rejected.CONSUMER_DEFINED, rejected.status());
        assertPrivateData(reason, rejected.privateData());
    }

    @Test
    void privateDataOverTheCmLimitsIsRefused() throws Exception {
        listen(4);
        CmId id = client(listener.localAddress());
        assertThrows(InvalidRequestException.class, () -> id.connect(ConnectionParameters.of(
                new byte[ConnectionParameters.MAX_CONNECT_PRIVATE_DATA + 1])));
        id.connect(ConnectionParameters.of(new byte[ConnectionParameters.MAX_CONNECT_PRIVATE_DATA]));
        CmId agent = agent(await(serverEvents, CmEvent.ConnectRequest.class));
        assertThrows(InvalidRequestException.class, () -> agent.accept(ConnectionParameters.of(
                new byte[ConnectionParameters.MAX_ACCEPT_PRIVATE_DATA + 1])));
        assertThrows(InvalidRequestException.class, () -> agent.reject(
                new byte[ConnectionParameters.MAX_REJECT_PRIVATE_DATA + 1]));
        assertNull(id.channel().await(QUIET), "a refused accept or reject reached the peer");
        agent.reject(new byte[ConnectionParameters.MAX_REJECT_PRIVATE_DATA]);
        assertEquals(CmEvent.Rejected.CONSUMER_DEFINED, await(id.channel(), CmEvent.Rejected.class).status());
    }

    @Test
    void requestsBeyondTheBacklogAreRejected() throws Exception {
        listen(1);
        CmId first = client(listener.localAddress());
        first.connect(ConnectionParameters.of(null));
        CmEvent.ConnectRequest pending = await(serverEvents, CmEvent.ConnectRequest.class);
        CmId second = client(listener.localAddress());
        second.connect(ConnectionParameters.of(data(8, 4)));
        CmEvent.Rejected rejected = await(second.channel(), CmEvent.Rejected.class);
        assertEquals(CmEvent.Rejected.CONSUMER_DEFINED, rejected.status());
        assertPrivateData(new byte[0], rejected.privateData());
        assertNull(serverEvents.await(QUIET), "a request beyond the backlog reached the listener");
        agent(pending).reject(null);
        assertEquals(CmEvent.Rejected.CONSUMER_DEFINED, await(first.channel(), CmEvent.Rejected.class).status());
    }

    @Test
    void disconnectReachesBothSidesAndTimewaitExitFollowsOnceBothDisconnected() throws Exception {
        try (Loopback loop = Loopback.viaCm(fabric, ConnectionParameters.of(null), ConnectionParameters.of(null))) {
            MemoryRegion buf = loop.a.register(16);
            loop.a.qp.postReceive(ReceiveWorkRequest.of(1, buf.sge()));
            loop.a.id.disconnect();
            assertEquals(QpState.ERR, loop.a.qp.state());
            WorkCompletion flushed = poll(loop.a.cq);
            assertEquals(1, flushed.wrId());
            assertEquals(WcStatus.WR_FLUSH_ERR, flushed.status());
            assertEquals(loop.b.id.handle(), await(loop.serverEvents, CmEvent.Disconnected.class).id());
            assertEquals(QpState.RTS, loop.b.qp.state(), "the peer's QP changes only when the peer disconnects");
            // the active side hears DISCONNECTED when the peer answers (as a DREP does), timewait after both
            CmEvent early = loop.clientEvents.await(QUIET);
            assertFalse(early instanceof CmEvent.TimewaitExit, "timewait ended before the peer disconnected");

            loop.b.id.disconnect();
            assertEquals(QpState.ERR, loop.b.qp.state());
            if (early == null) {
                assertEquals(loop.a.id.handle(), await(loop.clientEvents, CmEvent.Disconnected.class).id());
            } else {
                assertEquals(loop.a.id.handle(), assertInstanceOf(CmEvent.Disconnected.class, early).id());
            }
            assertEquals(loop.a.id.handle(), await(loop.clientEvents, CmEvent.TimewaitExit.class).id());
            assertEquals(loop.b.id.handle(), await(loop.serverEvents, CmEvent.TimewaitExit.class).id());
        }
    }

    @Test
    void migratingAnIdMovesItsEventsToTheOtherChannel() throws Exception {
        EventChannel other = opened(fabric.createEventChannel());
        try (Loopback loop = Loopback.viaCm(fabric, ConnectionParameters.of(null), ConnectionParameters.of(null))) {
            loop.b.id.migrate(other);
            assertSame(other, loop.b.id.channel());
            assertSame(loop.b.id, other.cmId(loop.b.id.handle()));
            loop.a.id.disconnect();
            assertEquals(loop.b.id.handle(), await(other, CmEvent.Disconnected.class).id());
            loop.b.id.disconnect();
            assertEquals(loop.a.id.handle(), await(loop.clientEvents, CmEvent.Disconnected.class).id());
            assertEquals(loop.b.id.handle(), await(other, CmEvent.TimewaitExit.class).id());
            assertNull(loop.serverEvents.await(QUIET), "an event on the channel the id left");
        }
    }

    @Test
    void activeQpTakesTheRetryCountsItConnectsWith() throws Exception {
        // rdma_cm gives the active QP the REP's rnr_retry_count, so the passive side asks for 0 too
        ConnectionParameters noRetries = new ConnectionParameters(null, 16, 16, 0, 0);
        try (Loopback loop = Loopback.viaCm(fabric, noRetries, noRetries)) {
            QpAttributes active = loop.a.qp.query();
            assertEquals(0, active.retryCount(), "retry_cnt");
            assertEquals(0, active.rnrRetry(), "rnr_retry");
            // no receive at the peer and no RNR retry: the first RNR NAK ends the send
            MemoryRegion src = loop.a.register(8);
            loop.a.qp.postSend(SendWorkRequest.send(1, src.sge()));
            WorkCompletion wc = poll(loop.a.cq);
            assertEquals(1, wc.wrId());
            assertEquals(WcStatus.RNR_RETRY_EXC_ERR, wc.status());
        }
    }

    @Test
    void passiveQpTakesTheResponderResourcesAndInitiatorDepthItAcceptsWith() throws Exception {
        ConnectionParameters accept = new ConnectionParameters(null, 0, 2, 7, 7);
        try (Loopback loop = Loopback.viaCm(fabric, ConnectionParameters.of(null), accept)) {
            QpAttributes passive = loop.b.qp.query();
            assertEquals(0, passive.maxDestRdAtomic(), "max_dest_rd_atomic");
            assertEquals(2, passive.maxRdAtomic(), "max_rd_atomic");
        }
    }

    @Test
    void passiveQpTakesTheRetryCountsOfTheRequest() throws Exception {
        // ib_cm keeps the REQ's retry_count and rnr_retry_count for the passive QP, and rdma_accept
        // moves it to RTS before its own parameters leave in the REP
        ConnectionParameters connect = new ConnectionParameters(null, 16, 16, 3, 0);
        try (Loopback loop = Loopback.viaCm(fabric, connect, ConnectionParameters.of(null))) {
            QpAttributes passive = loop.b.qp.query();
            assertEquals(3, passive.retryCount(), "retry_cnt");
            assertEquals(0, passive.rnrRetry(), "rnr_retry");
            // no receive at the active side and the REQ's rnr_retry_count of 0: the first RNR NAK ends the send
            MemoryRegion src = loop.b.register(8);
            loop.b.qp.postSend(SendWorkRequest.send(1, src.sge()));
            WorkCompletion wc = poll(loop.b.cq);
            assertEquals(1, wc.wrId());
            assertEquals(WcStatus.RNR_RETRY_EXC_ERR, wc.status());
        }
    }

    @Test
    void activeQpTakesTheRnrRetryCountAndResourcesOfTheReply() throws Exception {
        // ib_cm gives the active QP the REP's rnr_retry_count, and its initiator depth and responder
        // resources crossed: what the passive side accepts to answer is what the active side may ask
        ConnectionParameters connect = new ConnectionParameters(null, 4, 4, 7, 0);
        ConnectionParameters accept = new ConnectionParameters(null, 1, 2, 7, 5);
        try (Loopback loop = Loopback.viaCm(fabric, connect, accept)) {
            QpAttributes active = loop.a.qp.query();
            assertEquals(5, active.rnrRetry(), "rnr_retry");
            assertEquals(7, active.retryCount(), "retry_cnt");
            assertEquals(1, active.maxRdAtomic(), "max_rd_atomic");
            assertEquals(2, active.maxDestRdAtomic(), "max_dest_rd_atomic");
        }
    }

    @Test
    void eventChannelIsBusyWhileAnIdIsOnIt() {
        EventChannel events = fabric.createEventChannel();
        CmId id = fabric.createCmId(events, PortSpace.TCP);
        assertThrows(ResourceBusyException.class, events::close);
        id.close();
        events.close();
    }

    @Test
    void connectionSetUpByTheCmCarriesData() throws Exception {
        try (Loopback loop = Loopback.viaCm(fabric, ConnectionParameters.of(null), ConnectionParameters.of(null))) {
            MemoryRegion src = loop.a.register(pattern(24, 5));
            MemoryRegion inbox = loop.b.register(24);
            loop.b.qp.postReceive(ReceiveWorkRequest.of(1, inbox.sge()));
            loop.a.qp.postSend(SendWorkRequest.send(2, src.sge()));
            assertEquals(24, pollSuccess(loop.b.cq, 1).byteLen());
            pollSuccess(loop.a.cq, 2);
            assertArrayEquals(patternBytes(24, 5), bytes(inbox.buffer(), 0, 24));
        }
    }
}
