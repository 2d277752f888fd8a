package dev.sluice.redis;

import dev.sluice.FailurePolicy;
import dev.sluice.TimeSource;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.testkit.RateLimiterContract;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The store contract, unchanged, against a real Redis started by the test (or {@code SLUICE_REDIS_URL}). */
class RedisContractTest extends RateLimiterContract {

    private static RedisStore store;

    @BeforeAll
    static void connect() {
        store = contractStore(RedisStore.builder(Servers.client()));
    }

    /**
     * The contract's store: the limiter's clock; failures thrown, so that a store failure fails the test instead of
     * being answered by a policy; and keys kept a minute past their state, because the contract moves its clock by
     * hand far faster than real time and a slow machine must never see a key expire (in real time) before the
     * test's timeline is done with it.
     */
    static RedisStore contractStore(RedisStore.Builder builder) {
        return builder.timeSource(TimeSource.CLOCK)
                .failurePolicy(FailurePolicy.THROW)
                .timeout(Servers.PATIENCE)
                .expiryMargin(Duration.ofMinutes(1))
                .build();
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
