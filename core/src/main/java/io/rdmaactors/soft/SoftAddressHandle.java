package io.rdmaactors.soft;

import io.rdmaactors.cm.AddressVector;
import io.rdmaactors.verbs.AddressHandle;
import io.rdmaactors.verbs.ResourceKind;

final class SoftAddressHandle extends SoftResource implements AddressHandle {

    private final SoftProtectionDomain pd;
    private final AddressVector addressVector;

    SoftAddressHandle(SoftProtectionDomain pd, AddressVector addressVector) {
        super(pd.fabric, ResourceKind.ADDRESS_HANDLE);
        this.pd = pd;
        this.addressVector = addressVector;
        pd.dependants.incrementAndGet();
    }

    @Override
    public AddressVector addressVector() {
        return addressVector;
    }

    @Override
    void destroy() {
        pd.dependants.decrementAndGet();
    }
}
