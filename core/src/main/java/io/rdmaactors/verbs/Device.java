package io.rdmaactors.verbs;

import io.rdmaactors.cm.AsyncEvent;
import io.rdmaactors.cm.EventSource;

/** An opened RDMA device ({@code struct ibv_context}); the fabric owns and closes it. */
public interface Device {

    String name();

    DeviceAttributes query();

    PortAttributes queryPort(int portNum);

    ProtectionDomain allocateProtectionDomain();

    CompletionChannel createCompletionChannel();

    /** A CQ of at least {@code cqe} entries; {@code channel} may be null for a polled-only CQ. */
    CompletionQueue createCompletionQueue(int cqe, CompletionChannel channel);

    /**
     * The device's async events ({@code ibv_get_async_event}); the provider acknowledges each once
     * it is copied, so destroying a resource never waits on an event.
     */
    EventSource<AsyncEvent> asyncEvents();

    /** False once the device was removed or the fabric closed. */
    boolean isAlive();
}
