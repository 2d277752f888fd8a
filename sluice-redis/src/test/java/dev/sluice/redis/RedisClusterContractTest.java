package dev.sluice.redis;

import dev.sluice.spi.RateLimitStore;
import dev.sluice.testkit.RateLimiterContract;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The store contract, unchanged, against a real 3-master Redis Cluster on loopback that the test starts (or
 * {@code SLUICE_REDIS_CLUSTER_URL}), through Lettuce's cluster client.
 */
class RedisClusterContractTest extends RateLimiterContract {

    private static RedisStore store;

    @BeforeAll
    static void connect() {
        store = RedisContractTest.contractStore(RedisStore.builder(Servers.clusterClient()));
    }

    @AfterAll
    static void close() {
        store.close();
    }

    @Override
    protected RateLimitStore store() {
        return store;
    }

    @Override
    protected Duration resolution() {
        return Duration.ofNanos(1000);
    }
}
