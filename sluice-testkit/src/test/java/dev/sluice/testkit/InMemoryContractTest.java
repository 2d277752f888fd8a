package dev.sluice.testkit;

import dev.sluice.memory.InMemoryStore;
import dev.sluice.spi.RateLimitStore;

/** The reference store passes its own contract (its randomized comparison is then with itself). */
class InMemoryContractTest extends RateLimiterContract {

    @Override
    protected RateLimitStore store() {
        return InMemoryStore.create();
    }
}
