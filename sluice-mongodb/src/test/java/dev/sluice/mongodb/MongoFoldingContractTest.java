package dev.sluice.mongodb;

import com.mongodb.client.MongoClient;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.testkit.RateLimiterContract;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The store contract again with a key's requests folded into its stored state every 3 requests instead of 32: every
 * decision then restores a state from its stored numbers, and folds race with the requests of the other threads.
 */
class MongoFoldingContractTest extends RateLimiterContract {

    private static MongoClient client;
    private static MongoStore store;

    @BeforeAll
    static void connect() {
        client = Mongo.client();
        store = Mongo.clockStore(client).compactAfter(3).build();
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
