package dev.sluice.policy;

import dev.sluice.FailurePolicy;
import dev.sluice.TimeSource;
import dev.sluice.postgres.PostgresStore;
import dev.sluice.spi.RateLimitStore;

/**
 * All or nothing on PostgreSQL: each check one call over every key it touches. The other instance is a second store
 * on the same table. Timed by the limiters' hand-moved clock; a failure throws, so it can never pass for an answer.
 */
class PostgresPolicyStoreTest extends PolicyStoreContract {

    private static final String TABLE = "sluice_policy_test";
    private static final PostgresStore STORE = build();
    private static final PostgresStore OTHER = build();

    static PostgresStore build() {
        return PostgresStore.builder(Servers.postgres())
                .table(TABLE)
                .timeSource(TimeSource.CLOCK)
                .failurePolicy(FailurePolicy.THROW)
                .timeout(Servers.PATIENCE)
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
