package dev.sluice.mongodb;

import com.mongodb.client.MongoClient;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.testkit.RateLimiterContract;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The store contract, unchanged, against MongoDB on the limiter's clock (nanoseconds, so no coarser resolution). */
class MongoContractTest extends RateLimiterContract {

    private static MongoClient client;
    private static MongoStore store;

    @BeforeAll
    static void connect() {
        client = Mongo.client();
        store = Mongo.clockStore(client).build();
    }

    @AfterAll
    static void close() {
        client.close();
    }

    @Override
    protected RateLimitStore store() {
        return store;
    }
}
