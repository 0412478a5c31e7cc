package io.rdmaactors.verbs;

import io.rdmaactors.cm.AddressVector;

/** An address handle ({@code ibv_ah}): the destination of UD sends. */
public interface AddressHandle extends AutoCloseable {

    AddressVector addressVector();

    @Override
    void close();
}
