package dev.sluice.policy;

import dev.sluice.spi.CounterStore;
import dev.sluice.sync.InMemoryCounterStore;

/** All or nothing in synchronized mode over the in-memory counter store. */
class SynchronizedInMemoryPolicyStoreTest extends SynchronizedPolicyStoreContract {

    private final InMemoryCounterStore counters = InMemoryCounterStore.create();

    @Override
    protected CounterStore counterStore() {
        return counters;
    }
}
