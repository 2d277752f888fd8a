package dev.sluice.postgres;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.spi.CounterStore;
import dev.sluice.testkit.LeasedContract;
import dev.sluice.testkit.server.PostgresServers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The leased mode contract, unchanged, on the shared real PostgreSQL: every simulated instance gets a counter store
 * of its own over one pool that keeps its connections open.
 */
class PostgresLeasedContractTest extends LeasedContract {

    private static final String TABLE = "sluice_leased_contract";
    private static final int CONNECTIONS = 12;

    private static HikariDataSource pool;

    @BeforeAll
    static void createTable() {
        pool = Databases.pool(PostgresServers.shared(), CONNECTIONS, Databases.PATIENCE, CONNECTIONS);
        PostgresStore.counterStoreBuilder(pool).table(TABLE).build();
    }

    @AfterAll
    static void closePool() {
        pool.close();
    }

    @Override
    protected CounterStore counterStore() {
        return PostgresStore.counterStoreBuilder(pool)
                .table(TABLE)
                .createSchema(false)
                .timeout(Databases.PATIENCE)
                .build();
    }
}
