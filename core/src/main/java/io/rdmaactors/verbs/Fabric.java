package io.rdmaactors.verbs;

import java.util.ArrayList;
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

    /** Opens the fabric of the named provider with provider options. */
    static Fabric open(String provider, Map<String, String> options) {
        for (FabricProvider p : providers(new ArrayList<>())) {
            if (p.name().equals(provider)) {
                return p.open(options);
            }
        }
        throw new FabricUnavailableException("Fabric.open", missing(provider), null);
    }

    /** The names of the providers on the class path that load here. */
    static List<String> providerNames() {
        return providers(new ArrayList<>()).stream().map(FabricProvider::name).toList();
    }

    /**
     * Why no provider named {@code provider} is here, in one line: the ffm provider on a Java
     * older than 22, else the names there are, and a provider that could not load, if one did not.
     */
    static String missing(String provider) {
        if (provider.equals("ffm") && Runtime.version().feature() < 22) {
            return "the ffm provider needs Java 22 or newer (this is Java " + Runtime.version().feature()
                    + ") and rdma-actors-ffm on the class path";
        }
        List<String> unloadable = new ArrayList<>();
        List<String> names = providers(unloadable).stream().map(FabricProvider::name).toList();
        return "no fabric provider named '" + provider + "' on the class path (there are " + names + ")"
                + (unloadable.isEmpty() ? "" : "; one could not load: " + unloadable.get(0));
    }

    /**
     * The providers on the class path, passing over one that cannot load here (the ffm provider on
     * a Java older than 22), whose error goes to {@code unloadable}.
     */
    private static List<FabricProvider> providers(List<String> unloadable) {
        Iterator<FabricProvider> found = ServiceLoader.load(FabricProvider.class, Fabric.class.getClassLoader())
                .iterator();
        List<FabricProvider> providers = new ArrayList<>();
        while (true) {
            try {
                if (!found.hasNext()) {
                    return providers;
                }
                providers.add(found.next());
            } catch (ServiceConfigurationError e) {
                unloadable.add(e.getMessage());
            }
        }
    }

    static Fabric open(String provider) {
        return open(provider, Map.of());
    }
}
