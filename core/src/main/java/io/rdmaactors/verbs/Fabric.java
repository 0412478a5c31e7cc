package io.rdmaactors.verbs;

import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;

/**
 * An RDMA fabric as one provider sees it: its devices, and the communication manager (event
 * channels and CM ids). Closing a fabric closes every resource still open on it.
 */
public interface Fabric extends AutoCloseable {

    /** The provider name: {@code soft} or {@code jna}. */
    String provider();

    List<Device> devices();

    /** The device with this name ({@code soft0}, {@code rxe0}, {@code mlx5_0}). */
    Device device(String name);

    /** A new CM event channel ({@code rdma_create_event_channel}). */
    EventChannel createEventChannel();

    /** A new CM id on {@code channel} ({@code rdma_create_id}). */
    CmId createCmId(EventChannel channel, PortSpace portSpace);

    /**
     * Resolves a node and service to IPv4 RDMA addresses ({@code rdma_getaddrinfo}). Passive: the
     * addresses to bind and listen on ({@code node} null: every local address); otherwise the
     * destinations to connect to. The QP type is RC for the TCP port space, UD for UDP.
     *
     * @param node    a host name or address, or null with {@code passive}
     * @param service a port number (the jna provider also takes service names)
     * @throws VerbsException naming {@code rdma_getaddrinfo} when nothing resolves
     */
    List<AddressInfo> addressInfo(String node, String service, boolean passive, PortSpace portSpace);

    /** Live resources by kind: every create counts up, every close counts down. */
    ResourceLedger ledger();

    /** Fault injection, where the provider can simulate failures (the soft fabric can). */
    default Optional<FaultInjector> faults() {
        return Optional.empty();
    }

    @Override
    void close();

    /**
     * Opens the fabric of the named provider with provider options. A provider that cannot load
     * here (the ffm provider on a Java older than 22) is passed over, and named in the error if
     * nothing else answers to the name.
     */
    static Fabric open(String provider, Map<String, String> options) {
        Iterator<FabricProvider> providers = ServiceLoader.load(FabricProvider.class, Fabric.class.getClassLoader())
                .iterator();
        String unloadable = null;
        while (true) {
            FabricProvider p;
            try {
                if (!providers.hasNext()) {
                    break;
                }
                p = providers.next();
            } catch (ServiceConfigurationError e) {
                unloadable = e.getMessage();
                continue;
            }
            if (p.name().equals(provider)) {
                return p.open(options);
            }
        }
        if (provider.equals("ffm") && Runtime.version().feature() < 22) {
            throw new FabricUnavailableException("Fabric.open", "the ffm provider needs Java 22 or newer (this is Java "
                    + Runtime.version().feature() + ") and rdma-actors-ffm on the class path", null);
        }
        throw new FabricUnavailableException("Fabric.open", "no fabric provider named '" + provider
                + "' on the class path" + (unloadable == null ? "" : " (one could not load: " + unloadable + ")"), null);
    }

    static Fabric open(String provider) {
        return open(provider, Map.of());
    }
}
