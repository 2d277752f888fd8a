package dev.sluice.testkit;

import dev.sluice.memory.InMemoryCounterStore;
import dev.sluice.spi.CounterStore;

/** Leased mode on the in-memory counter store passes the leased mode contract. */
class InMemoryLeasedContractTest extends LeasedContract {

    private final InMemoryCounterStore records = InMemoryCounterStore.expiringWith(clock);

    @Override
    protected CounterStore counterStore() {
        return records;
    }
}
