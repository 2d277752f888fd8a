package dev.sluice.mongodb;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import dev.sluice.spi.StoreConnection;
import dev.sluice.spi.StoreProvider;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Opens {@code mongodb://…/database} and {@code mongodb+srv://…/database} for
 * {@link dev.sluice.assembly.StoreAssembly}; found through {@link java.util.ServiceLoader}, not called directly.
 */
public final class MongoStoreProvider implements StoreProvider {

    /** Connections the pool keeps open, unless the URI sets {@code minPoolSize}. */
    static final int MIN_POOL = 2;
    /** How often the pool refills itself to its minimum, in milliseconds. */
    static final long MAINTENANCE_MILLIS = 100;

    /** For {@link java.util.ServiceLoader}. */
    public MongoStoreProvider() {}

    @Override
    public Set<String> schemes() {
        return Set.of("mongodb", "mongodb+srv");
    }

    @Override
    public StoreConnection connect(String uri) {
        ConnectionString cs;
        try {
            cs = new ConnectionString(uri);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("expected mongodb://host:port/database (" + e.getMessage() + ")", e);
        }
        String database = cs.getDatabase();
        if (database == null || database.isEmpty()) {
            throw new IllegalArgumentException("name the database: mongodb://host:port/database");
        }
        MongoClient client = MongoClients.create(settings(cs));
        return MongoStore.connection(client, database, client);
    }

    /**
     * The client's settings from the URI, with a pool that keeps {@value #MIN_POOL} connections open unless the URI
     * says how many ({@code minPoolSize}), refilled every {@value #MAINTENANCE_MILLIS} ms. Each decision gets the store
     * timeout (15 ms in the rate-limit service), too short for the driver to open a connection under load; after an
     * outage the driver empties its pool, and without connections opened in the background every call would try to
     * open one within its own few milliseconds and give up, so decisions could stay on the failure rule long after
     * MongoDB is back.
     */
    static MongoClientSettings settings(ConnectionString cs) {
        return MongoClientSettings.builder()
                .applyConnectionString(cs)
                .applyToConnectionPoolSettings(pool -> {
                    if (cs.getMinConnectionPoolSize() == null) {
                        pool.minSize(MIN_POOL);
                    }
                    pool.maintenanceInitialDelay(0, TimeUnit.MILLISECONDS)
                            .maintenanceFrequency(MAINTENANCE_MILLIS, TimeUnit.MILLISECONDS);
                })
                .build();
    }
}
