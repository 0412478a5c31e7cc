package io.rdmaactors.jna;

import io.rdmaactors.cm.AddressVector;
import io.rdmaactors.verbs.AddressHandle;
import io.rdmaactors.verbs.InvalidRequestException;
import io.rdmaactors.verbs.ResourceClosedException;
import io.rdmaactors.verbs.ResourceKind;

/** An {@code ibv_ah}. */
final class JnaAddressHandle extends JnaResource implements AddressHandle {

    private final AddressVector addressVector;

    JnaAddressHandle(JnaProtectionDomain pd, long ah, AddressVector addressVector) {
        super(pd.fabric, ResourceKind.ADDRESS_HANDLE, ah);
        this.addressVector = addressVector;
    }

    /** The handle a UD send names; a closed one is refused before it reaches the driver. */
    static JnaAddressHandle of(AddressHandle ah) {
        if (!(ah instanceof JnaAddressHandle j)) {
            throw new InvalidRequestException("ibv_post_send", "not an address handle of the jna fabric: " + ah);
        }
        if (j.isClosed()) {
            throw new ResourceClosedException("ibv_post_send", "the address handle is closed");
        }
        return j;
    }

    @Override
    public AddressVector addressVector() {
        return addressVector;
    }

    @Override
    String destroyCall() {
        return "ibv_destroy_ah";
    }

    @Override
    int destroy(boolean force) {
        return core.ibv_destroy_ah(pointer);
    }
}
