package dev.sluice.policy;

import dev.sluice.FailurePolicy;
import dev.sluice.TimeSource;
import dev.sluice.mongodb.MongoStore;
import dev.sluice.spi.RateLimitStore;

/**
 * All or nothing on MongoDB. The other instance is a second store on the same database. Timed by the limiters'
 * hand-moved clock, with no TTL index (a real server's TTL monitor could delete documents whose hand-moved expiry
 * it has passed); a failure throws, so it can never pass for an answer.
 */
class MongoPolicyStoreTest extends PolicyStoreContract {

    private static final String DATABASE = "sluice_policy_test";
    private static final MongoStore STORE = build();
    private static final MongoStore OTHER = build();

    static MongoStore build() {
        return MongoStore.builder(Servers.mongo(), DATABASE)
                .timeSource(TimeSource.CLOCK)
                .failurePolicy(FailurePolicy.THROW)
                .timeout(Servers.PATIENCE)
                .createIndex(false)
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
