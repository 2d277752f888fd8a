package dev.sluice.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.testkit.server.PostgresServers;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import javax.sql.DataSource;

/** Connection pools for the tests, configured as the store's class comment asks: every wait bounded. */
final class Databases {

    /**
     * The store timeout (and pool borrowing bound) of the tests about semantics rather than failures: a loaded
     * machine must not turn a slow answer into a failure there.
     */
    static final Duration PATIENCE = Duration.ofSeconds(30);

    private static HikariDataSource shared; // guarded by Databases.class

    private Databases() {}

    /**
     * A pool on the JVM-wide test server, shared by the test classes, borrowing within {@link #PATIENCE}; never
     * closed (the JVM's exit ends it).
     */
    static synchronized DataSource shared() {
        if (shared == null) {
            shared = pool(PostgresServers.shared(), 8, PATIENCE);
        }
        return shared;
    }

    /**
     * A pool of at most {@code size} connections to {@code url}: borrowing waits at most 250 ms (HikariCP's least),
     * the driver's connect and login at most 1 s.
     */
    static HikariDataSource pool(String url, int size) {
        return pool(url, size, Duration.ofMillis(250));
    }

    /** A pool as {@link #pool(String, int)} whose borrowing waits at most {@code borrow}. */
    static HikariDataSource pool(String url, int size, Duration borrow) {
        return pool(url, size, borrow, 0);
    }

    /**
     * A pool as {@link #pool(String, int, Duration)} that keeps {@code idle} connections open, so that borrowing
     * rarely waits for a new connection.
     */
    static HikariDataSource pool(String url, int size, Duration borrow, int idle) {
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(url);
        c.setMaximumPoolSize(size);
        c.setMinimumIdle(idle);
        c.setConnectionTimeout(borrow.toMillis());
        c.setValidationTimeout(250);
        c.setInitializationFailTimeout(-1);
        c.addDataSourceProperty("connectTimeout", "1");
        c.addDataSourceProperty("loginTimeout", "1");
        c.addDataSourceProperty("socketTimeout", "10");
        c.setPoolName("sluice-test-" + size);
        return new HikariDataSource(c);
    }

    /** The single long value {@code sql} selects. */
    static long queryLong(DataSource dataSource, String sql) throws SQLException {
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            if (!rs.next()) {
                throw new AssertionError("no row from " + sql);
            }
            return rs.getLong(1);
        }
    }

    /** Runs {@code sql}. */
    static void execute(DataSource dataSource, String sql) throws SQLException {
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }
}
