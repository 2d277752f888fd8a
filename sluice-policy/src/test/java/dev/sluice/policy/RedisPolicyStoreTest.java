package dev.sluice.policy;

import dev.sluice.FailurePolicy;
import dev.sluice.TimeSource;
import dev.sluice.redis.RedisStore;
import dev.sluice.spi.RateLimitStore;
import java.time.Duration;

/**
 * All or nothing on Redis: each check one script over every key it touches. The other instance is a second store
 * on the same server. Timed by the limiters' hand-moved clock; keys kept a minute past their state, since the clock
 * moves far faster than real time; a failure throws, so it can never pass for an answer.
 */
class RedisPolicyStoreTest extends PolicyStoreContract {

    private static final RedisStore STORE = build();
    private static final RedisStore OTHER = build();

    static RedisStore build() {
        return RedisStore.builder(Servers.redis())
                .timeSource(TimeSource.CLOCK)
                .failurePolicy(FailurePolicy.THROW)
                .timeout(Servers.PATIENCE)
                .expiryMargin(Duration.ofMinutes(1))
                .build();
    }

    @Override
    protected RateLimitStore store() {
        return STORE;
    }

    @Override
    protected RateLimitStore otherInstance() {
        return OTHER;
    }
}
