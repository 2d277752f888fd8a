package dev.sluice.mongodb;

import dev.sluice.spi.RateLimitStore;
import dev.sluice.testkit.RateLimiterContract;

/** The store contract, unchanged, against MongoDB on the limiter's clock (nanoseconds, so no coarser resolution). */
class MongoContractTest extends RateLimiterContract {

    @Override
    protected RateLimitStore store() {
        return Mongo.sharedClockStore();
    }
}
