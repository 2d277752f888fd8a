package dev.sluice.postgres;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.spi.CounterStore;
import dev.sluice.testkit.CounterStoreContract;
import dev.sluice.testkit.server.PostgresServers;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The counter store contract, unchanged, on a real PostgreSQL of this class's own: the worked example, no lost update
 * across ten instances with real conflicts, and an outage in which the server is stopped and started again on the
 * same port and data.
 *
 * <p>Every simulated instance gets a counter store of its own over one pool that keeps its connections open, so that
 * borrowing does not wait for new connections on a loaded machine. A borrow waits at most 1 s: during the outage each
 * failed call takes that long, since the pool cannot tell a server that is down from one that is slow to accept.
 */
class PostgresCounterStoreContractTest extends CounterStoreContract {

    private static final String TABLE = "sluice_counter_contract";
    private static final int CONNECTIONS = 12;

    private static PostgresServers.Own server;
    private static HikariDataSource pool;

    @BeforeAll
    static void startServer() {
        server = PostgresServers.startOwn();
        pool = Databases.pool(server.url(), CONNECTIONS, Duration.ofSeconds(1), CONNECTIONS);
        PostgresStore.counterStoreBuilder(pool).table(TABLE).build();
    }

    @AfterAll
    static void stopServer() {
        try {
            pool.close();
        } finally {
            server.close();
        }
    }

    @Override
    protected CounterStore counterStore() {
        return PostgresStore.counterStoreBuilder(pool)
                .table(TABLE)
                .createSchema(false)
                .timeout(Databases.PATIENCE)
                .build();
    }

    @Override
    protected void stopStore() {
        server.stop();
    }

    @Override
    protected void startStore() {
        server.restart();
    }
}
