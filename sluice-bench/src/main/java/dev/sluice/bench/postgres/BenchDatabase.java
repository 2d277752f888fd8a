package dev.sluice.bench.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.testkit.server.PostgresServers;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;

/**
 * The one PostgreSQL server and connection pool setup every PostgreSQL benchmark uses, so that Sluice and Bucket4j
 * are measured on the same server with the same pool: {@code SLUICE_POSTGRES_URL} if set (run-postgres.sh starts one
 * embedded server for the whole run and sets it), else an embedded server per benchmark fork.
 */
public final class BenchDatabase {

    /** The most concurrent callers a benchmark has; the pool holds one connection for each. */
    public static final int CALLERS = 64;
    /** Every benchmark's limit: far above what this machine can request, so every decision is "allowed". */
    public static final long LIMIT = 10_000_000;

    /**
     * The window of {@link #LIMIT} on {@code keys} keys. One hot key: 100 ms, as the in-memory benchmarks' ALLOWED
     * load, so that a sliding log holds the requests of 100 ms, not of the whole run. 100,000 keys: one hour, so
     * that every key stays live between two visits (a lap over the keys takes tens of seconds here). With a window
     * shorter than a lap every request would find its key idle: Sluice deletes idle rows as new ones arrive, so it
     * would measure a table of keys coming and going (an insert and a sweep per request), not one of live keys.
     */
    public static Duration window(int keys) {
        return keys == 1 ? Duration.ofMillis(100) : Duration.ofHours(1);
    }

    private BenchDatabase() {}

    /** A HikariCP pool of {@value #CALLERS} connections; borrowing waits at most 5 s. */
    public static HikariDataSource pool(String name) {
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(PostgresServers.shared());
        c.setMaximumPoolSize(CALLERS);
        c.setMinimumIdle(CALLERS);
        c.setConnectionTimeout(5_000);
        c.addDataSourceProperty("connectTimeout", "5");
        c.addDataSourceProperty("loginTimeout", "5");
        c.setPoolName(name);
        return new HikariDataSource(c);
    }

    /** Runs {@code sql}. */
    public static void execute(HikariDataSource pool, String sql) {
        try (Connection c = pool.getConnection();
                Statement s = c.createStatement()) {
            s.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot run " + sql + ": " + e.getMessage(), e);
        }
    }

    /** Calls {@code request} for every index in {@code [0, n)}, from 16 threads: creates every key's row. */
    public static void populate(int n, IntConsumer request) {
        ExecutorService threads = Executors.newFixedThreadPool(16);
        try {
            Future<?>[] done = new Future<?>[16];
            for (int t = 0; t < 16; t++) {
                int first = t;
                done[t] = threads.submit(() -> {
                    for (int i = first; i < n; i += 16) {
                        request.accept(i);
                    }
                });
            }
            for (Future<?> f : done) {
                f.get(10, TimeUnit.MINUTES);
            }
        } catch (Exception e) {
            throw new IllegalStateException("cannot populate " + n + " keys: " + e, e);
        } finally {
            threads.shutdownNow();
        }
    }

    /** {@code n} distinct keys shaped like a per-client key: {@code client:0000000}, ... */
    public static String[] keys(int n) {
        String[] keys = new String[n];
        for (int i = 0; i < n; i++) {
            keys[i] = String.format("client:%07d", i);
        }
        return keys;
    }
}
