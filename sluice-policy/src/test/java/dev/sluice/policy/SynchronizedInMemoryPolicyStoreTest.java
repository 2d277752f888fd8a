package dev.sluice.policy;

import dev.sluice.memory.InMemoryCounterStore;
import dev.sluice.spi.CounterStore;

/** All or nothing in synchronized mode over the in-memory counter store. */
class SynchronizedInMemoryPolicyStoreTest extends SynchronizedPolicyStoreContract {

    private final InMemoryCounterStore counters = InMemoryCounterStore.create();

    @Override
    protected CounterStore counterStore() {
        return counters;
    }
}
