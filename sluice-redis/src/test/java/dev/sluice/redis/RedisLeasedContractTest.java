package dev.sluice.redis;

import dev.sluice.spi.CounterStore;
import dev.sluice.testkit.LeasedContract;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;

/** The leased mode contract, unchanged, on the shared real Redis: every simulated instance with a store of its own. */
class RedisLeasedContractTest extends LeasedContract {

    private final List<RedisCounterStore> opened = new CopyOnWriteArrayList<>();

    @AfterEach
    void closeStores() {
        opened.forEach(RedisCounterStore::close);
    }

    @Override
    protected CounterStore counterStore() {
        RedisCounterStore store = RedisStore.counterStoreBuilder(Servers.client())
                .timeout(Servers.PATIENCE)
                .build();
        opened.add(store);
        return store;
    }
}
