package dev.sluice.testkit;

import dev.sluice.SluiceException;
import dev.sluice.memory.InMemoryCounterStore;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterSnapshot;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterWrite;
import java.util.List;

/**
 * The in-memory counter store passes the counter store contract. Its outage is a switch in front of the store: while
 * it is off every call fails before reaching the records, which are kept.
 */
class InMemoryCounterStoreContractTest extends CounterStoreContract {

    private final InMemoryCounterStore records = InMemoryCounterStore.expiringWith(clock);
    private volatile boolean down;

    @Override
    protected CounterStore counterStore() {
        return new CounterStore() {
            @Override
            public List<CounterSnapshot> load(List<CounterKey> keys) {
                check();
                return records.load(keys);
            }

            @Override
            public boolean[] compareAndSet(List<CounterWrite> writes) {
                check();
                return records.compareAndSet(writes);
            }
        };
    }

    private void check() {
        if (down) {
            throw new SluiceException("the in-memory counter store is stopped");
        }
    }

    @Override
    protected void stopStore() {
        down = true;
    }

    @Override
    protected void startStore() {
        down = false;
    }
}
