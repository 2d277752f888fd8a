package dev.sluice.policy;

import dev.sluice.redis.RedisCounterStore;
import dev.sluice.redis.RedisStore;
import dev.sluice.spi.CounterStore;
import java.util.ArrayList;
import java.util.List;

/** All or nothing in synchronized mode over Redis's counter store: each instance a counter store of its own. */
class SynchronizedRedisPolicyStoreTest extends SynchronizedPolicyStoreContract {

    private final List<RedisCounterStore> opened = new ArrayList<>();

    @Override
    protected synchronized CounterStore counterStore() {
        RedisCounterStore s = RedisStore.counterStoreBuilder(Servers.redis())
                .timeout(Servers.PATIENCE)
                .build();
        opened.add(s);
        return s;
    }

    @Override
    protected synchronized void closeStores() {
        try {
            super.closeStores();
        } finally {
            opened.forEach(RedisCounterStore::close);
        }
    }
}
