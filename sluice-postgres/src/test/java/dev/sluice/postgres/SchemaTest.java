package dev.sluice.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.FailurePolicy;
import dev.sluice.RateLimiter;
import dev.sluice.SluiceException;
import dev.sluice.TimeSource;
import dev.sluice.spi.SharedRateLimiter;
import dev.sluice.testkit.LogCapture;
import dev.sluice.testkit.ManualClock;
import dev.sluice.testkit.server.PostgresServers;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The table and functions: created once however many instances start together, recreated when lost. */
class SchemaTest {

    private final DataSource dataSource = Databases.shared();
    private final ManualClock clock = new ManualClock(Instant.parse("2026-01-01T12:00:00Z"));
    private final String table = "sluice_schema_" + UUID.randomUUID().toString().substring(0, 8);

    @AfterEach
    void dropTable() throws SQLException {
        Databases.execute(
                dataSource,
                "DROP TABLE IF EXISTS " + table + " CASCADE; DROP TABLE IF EXISTS sluice_s." + table + " CASCADE");
    }

    private PostgresStore.Builder builder() {
        return PostgresStore.builder(dataSource)
                .table(table)
                .timeSource(TimeSource.CLOCK)
                .failurePolicy(FailurePolicy.THROW)
                .timeout(Databases.PATIENCE);
    }

    private RateLimiter limiter(PostgresStore store) {
        return RateLimiter.builder(Algorithm.FIXED_WINDOW)
                .limit(2, Duration.ofMinutes(1))
                .clock(clock)
                .store(store)
                .build();
    }

    private long functions() throws SQLException {
        return Databases.queryLong(dataSource, "SELECT count(*) FROM pg_proc WHERE proname LIKE '" + table + "\\_%'");
    }

    @Test
    void instancesStartingTogetherCreateItOnce() throws Exception {
        ExecutorService threads = Executors.newFixedThreadPool(6);
        try (HikariDataSource pool = Databases.pool(PostgresServers.shared(), 6, Duration.ofSeconds(30))) {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<PostgresStore>> built = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                Callable<PostgresStore> build = () -> {
                    start.await();
                    return PostgresStore.builder(pool)
                            .table(table)
                            .timeSource(TimeSource.CLOCK)
                            .failurePolicy(FailurePolicy.THROW)
                            .timeout(Databases.PATIENCE)
                            .build();
                };
                built.add(threads.submit(build));
            }
            start.countDown();
            RateLimiter first = limiter(built.get(0).get(1, TimeUnit.MINUTES));
            for (Future<PostgresStore> f : built) {
                f.get(1, TimeUnit.MINUTES); // none failed
            }
            assertEquals(1, first.tryAcquire("k").remaining());
            String script = builder().schemaScript();
            long scripted = script.split("CREATE OR REPLACE FUNCTION", -1).length - 1;
            assertEquals(33, scripted, "functions in the script");
            assertEquals(scripted, functions(), "every function of the script, once");
        } finally {
            threads.shutdownNow();
        }
    }

    @Test
    void aLostFunctionIsCreatedAgainByTheCallThatMissesIt() throws SQLException {
        SharedRateLimiter limiter = (SharedRateLimiter) limiter(builder().build());
        assertEquals(1, limiter.tryAcquire("k").remaining());
        Databases.execute(dataSource, "DROP FUNCTION " + table + "_step_fw");
        Decision d = limiter.tryAcquire("k");
        assertEquals(0, d.remaining(), "decided, on the state kept in the table: " + d);
        assertEquals(0, limiter.storeFailures());
    }

    @Test
    void aTableWhoseShapeColumnIsCalledStateIsRenamedAndKeepsItsRows() throws SQLException {
        Databases.execute(
                dataSource,
                "CREATE TABLE " + table + " (id bytea PRIMARY KEY, namespace text NOT NULL,"
                        + " state text NOT NULL, key text NOT NULL, expires_at bigint NOT NULL, win bigint, cur bigint,"
                        + " prev bigint, frac bigint, tat bigint, last bigint, seen bigint, expiries bigint[],"
                        + " weights bigint[])");
        Databases.execute(
                dataSource,
                "INSERT INTO " + table + " (id, namespace, state, key, expires_at)"
                        + " VALUES ('\\x00', 'old', 'fw:1', 'k', 0)");
        assertEquals(1, limiter(builder().build()).tryAcquire("k", 1).remaining());
        assertEquals(
                1,
                Databases.queryLong(dataSource, "SELECT count(*) FROM " + table + " WHERE shape = 'fw:1'"),
                "the old row, its shape column renamed");
        assertEquals(
                0,
                Databases.queryLong(
                        dataSource,
                        "SELECT count(*) FROM pg_attribute WHERE attrelid = '" + table
                                + "'::regclass AND attname = 'state'"),
                "no column state");
    }

    @Test
    void withoutCreateSchemaTheScriptIsRunByHand() throws SQLException {
        // build() reaches the database (a SELECT 1), finds the functions missing, says so once, and makes no warm-up
        // (none of its calls could succeed: it would spend the whole startup timeout on them).
        PostgresStore.Builder builder = builder().createSchema(false).failurePolicy(FailurePolicy.FAIL_CLOSED);
        SharedRateLimiter limiter;
        try (LogCapture log = LogCapture.start()) {
            limiter = (SharedRateLimiter) limiter(builder.build());
            assertEquals(
                    1,
                    log.messagesContaining("are missing or not this version's, and createSchema is off")
                            .size(),
                    "one warning at build()");
        }
        assertEquals(
                0,
                Databases.queryLong(dataSource, "SELECT count(*) FROM pg_class WHERE relname = '" + table + "'"),
                "build() created nothing");
        assertEquals(false, limiter.tryAcquire("k").allowed(), "no table: the failure policy answers");
        assertEquals(1, limiter.storeFailures());

        Databases.execute(dataSource, builder.schemaScript());
        Databases.execute(dataSource, builder.schemaScript()); // idempotent
        assertEquals(1, limiter.tryAcquire("k").remaining());
        assertEquals(1, limiter.storeFailures());
    }

    @Test
    void aSchemaQualifiesTheTableAndFunctions() throws SQLException {
        Databases.execute(dataSource, "CREATE SCHEMA IF NOT EXISTS sluice_s");
        PostgresStore store = builder().schema("sluice_s").build();
        assertEquals("sluice_s." + table, store.table());
        assertEquals(1, limiter(store).tryAcquire("k").remaining());
        // the key's row; the build's warm-up rows (key sluice-warm-up, under a namespace of their own) are there too
        assertEquals(1, Databases.queryLong(dataSource, "SELECT count(*) FROM sluice_s." + table + " WHERE key = 'k'"));
        assertEquals(
                0,
                Databases.queryLong(
                        dataSource,
                        "SELECT count(*) FROM pg_class WHERE relname = '" + table
                                + "' AND relnamespace = 'public'::regnamespace"));
    }

    @Test
    void badNamesAreRefusedByName() {
        PostgresStore.Builder b = PostgresStore.builder(dataSource);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> b.table("Limits; DROP"));
        assertTrue(e.getMessage().contains("'Limits; DROP'"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> b.schema(""));
        assertTrue(e.getMessage().startsWith("schema must be"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> b.table("t".repeat(41)));
        assertTrue(e.getMessage().contains("at most 40"), e.getMessage());
        assertThrows(NullPointerException.class, () -> b.table(null));
        assertThrows(NullPointerException.class, () -> PostgresStore.builder(null));
        assertThrows(IllegalArgumentException.class, () -> b.timeout(Duration.ZERO));
    }

    @Test
    void aDatabaseThatRefusesTheLoginFailsTheBuildWithASluiceException() {
        String url = PostgresServers.shared().replaceFirst("user=[^&]*", "user=sluice_nobody");
        try (HikariDataSource refused = Databases.pool(url, 1, Duration.ofSeconds(5))) {
            SluiceException e = assertThrows(
                    SluiceException.class, () -> PostgresStore.builder(refused).build());
            assertTrue(e.getMessage().startsWith("cannot create the table sluice_limit"), e.getMessage());
            Throwable root = e;
            while (root.getCause() != null) {
                root = root.getCause();
            }
            assertTrue(root.getMessage().contains("sluice_nobody"), "the server's refusal is the cause: " + root);
        }
    }
}
