package io.rdmaactors.verbs;

import io.rdmaactors.cm.CmEvent;
import io.rdmaactors.cm.EventSource;

/**
 * An RDMA CM event channel ({@code rdma_event_channel}). The provider copies every event (private
 * data included) and acknowledges it before handing it out, so destroying an id never blocks.
 */
public interface EventChannel extends EventSource<CmEvent>, AutoCloseable {

    /** The CM id an event names, including ids born from a connect request; null if unknown. */
    CmId cmId(long handle);

    /** Fails with {@link ResourceBusyException} while CM ids are still on the channel. */
    @Override
    void close();
}
