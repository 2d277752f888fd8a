package dev.sluice.mongodb;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import dev.sluice.FailurePolicy;
import dev.sluice.TimeSource;
import dev.sluice.testkit.server.MongoServers;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/** Clients and stores for the tests, on the server of {@link MongoServers}. */
final class Mongo {

    /** The database the tests write to. */
    static final String DATABASE = "sluice_test";
    /**
     * The timeout of every store of a test that is not about timeouts. Generous: on a loaded machine a call can wait
     * seconds for the CPU, and a test must fail on a wrong answer, never on a slow one turned into the failure
     * policy's answer.
     */
    static final Duration TIMEOUT = Duration.ofSeconds(30);

    private static @Nullable MongoStore sharedClockStore; // guarded by Mongo.class

    private Mongo() {}

    /** A new client (its own connection pool) for {@code connectionString}. */
    static MongoClient client(String connectionString) {
        return MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(connectionString))
                .build());
    }

    /**
     * A new client for {@code connectionString} that gives up selecting a server after {@code serverSelection}: a
     * call to a stopped server then fails that soon, however long the store's timeout.
     */
    static MongoClient client(String connectionString, Duration serverSelection) {
        return MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(connectionString))
                .applyToClusterSettings(
                        c -> c.serverSelectionTimeout(serverSelection.toMillis(), TimeUnit.MILLISECONDS))
                .build());
    }

    /** A new client of the shared test server. */
    static MongoClient client() {
        return client(MongoServers.connectionString());
    }

    /**
     * A store on the limiter's clock that throws on failure: what the contract runs against. It creates no TTL
     * index: the tests' clocks stand at dates a real server (see {@link MongoServers#URL_VARIABLE}) may already have
     * passed, and its TTL monitor would delete documents in the middle of a test.
     */
    static MongoStore.Builder clockStore(MongoClient client) {
        return MongoStore.builder(client, DATABASE)
                .timeSource(TimeSource.CLOCK)
                .failurePolicy(FailurePolicy.THROW)
                .timeout(TIMEOUT)
                .createIndex(false);
    }

    /**
     * The {@link #clockStore} of the shared test server built as it is, on a client of its own: one for every test
     * class that needs nothing else (the contracts), made by the first that asks and left open until the JVM ends.
     */
    static synchronized MongoStore sharedClockStore() {
        if (sharedClockStore == null) {
            sharedClockStore = clockStore(client()).build();
        }
        return sharedClockStore;
    }
}
