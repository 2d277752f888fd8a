package dev.sluice.policy;

import dev.sluice.memory.InMemoryStore;
import dev.sluice.spi.RateLimitStore;

/** All or nothing on the in-memory store, the default: the counts live in each limiter's heap. */
class InMemoryPolicyStoreTest extends PolicyStoreContract {

    private final InMemoryStore store = InMemoryStore.create();

    @Override
    protected RateLimitStore store() {
        return store;
    }
}
