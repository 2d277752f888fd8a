package dev.sluice.postgres;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.FailurePolicy;
import dev.sluice.SluiceException;
import dev.sluice.TimeSource;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.testkit.StoreBatchingContract;
import dev.sluice.testkit.server.PostgresServers;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The batching contract against PostgreSQL ({@link PostgresBatches}): concurrent decisions share calls of the batch
 * function. The stall stops the server's postmaster and every server process of it.
 */
class PostgresBatchesTest extends StoreBatchingContract {

    private static HikariDataSource pool;
    private static PostgresStore store;

    @BeforeAll
    static void startStore() {
        pool = Databases.pool(PostgresServers.shared(), 8, Databases.PATIENCE);
        store = PostgresStore.builder(pool)
                .table("sluice_batches")
                .timeSource(TimeSource.CLOCK)
                .failurePolicy(FailurePolicy.THROW)
                .timeout(Databases.PATIENCE)
                .build();
    }

    @AfterAll
    static void stopStore() {
        pool.close();
    }

    @Override
    protected RateLimitStore store() {
        return store;
    }

    @Override
    protected OwnServer startOwnServer() {
        PostgresServers.Own server = PostgresServers.startOwn();
        HikariDataSource own = Databases.pool(server.url(), 4, Duration.ofMillis(250), 4);
        return new OwnServer() {
            @Override
            public RateLimitStore store(Duration timeout, Consumer<? super SluiceException> failures) {
                return PostgresStore.builder(own)
                        .table("sluice_stall")
                        .timeSource(TimeSource.CLOCK)
                        .failurePolicy(FailurePolicy.FAIL_CLOSED)
                        .timeout(timeout)
                        .failureListener(failures)
                        .build();
            }

            @Override
            public List<Long> pids() throws SQLException {
                return serverProcesses(own);
            }

            @Override
            public void close() {
                own.close();
                server.close();
            }
        };
    }

    /** The postmaster of the server {@code pool} connects to (the parent of one of its server processes), and all its. */
    private static List<Long> serverProcesses(HikariDataSource pool) throws SQLException {
        long backend;
        try (Connection c = pool.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
            rs.next();
            backend = rs.getLong(1);
        }
        ProcessHandle postmaster = ProcessHandle.of(backend)
                .flatMap(ProcessHandle::parent)
                .orElseThrow(() -> new IllegalStateException("no parent of the server process " + backend));
        List<Long> pids = new ArrayList<>();
        pids.add(postmaster.pid());
        postmaster.children().forEach(p -> pids.add(p.pid()));
        return pids;
    }
}
