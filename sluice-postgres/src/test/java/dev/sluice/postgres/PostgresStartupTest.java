package dev.sluice.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.Acquisition;
import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.FailurePolicy;
import dev.sluice.RateLimiter;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterSnapshot;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.SharedRateLimiter;
import dev.sluice.testkit.Await;
import dev.sluice.testkit.LogCapture;
import dev.sluice.testkit.server.PostgresServers;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Building a store waits for the database (its startup timeout) and creates the schema before it returns; a database
 * that cannot be reached in time gives a store all the same, which creates its schema at the first call that reaches
 * it; a closed pool is the application's mistake: an {@link IllegalStateException} to the caller, never a failure
 * policy's answer. Runs on a server of its own, which it stops and starts.
 */
class PostgresStartupTest {

    private static final Duration WINDOW = Duration.ofHours(1);
    private static final Duration FAIL_CLOSED_RETRY_AFTER = Duration.ofSeconds(7);
    private static final Duration BORROW = Duration.ofSeconds(2);

    private static PostgresServers.Own server;

    private final String run = UUID.randomUUID().toString().replace("-", "").substring(0, 12);

    @BeforeAll
    static void startServer() {
        server = PostgresServers.startOwn();
    }

    @AfterAll
    static void stopServer() {
        server.close();
    }

    /**
     * A pool that would make a call wait longer for a connection than the store's timeout (HikariCP's default
     * {@code connectionTimeout} is 30 s) is named in one warning at build, with the value and the fix; a pool bounded
     * as the docs say gets none.
     */
    @Test
    void aPoolThatWaitsLongerThanTheTimeoutToLendAConnectionIsWarnedOfAtBuild() {
        try (LogCapture log = LogCapture.start();
                HikariDataSource slow = Databases.pool(server.url(), 1, Duration.ofSeconds(30));
                HikariDataSource bounded = Databases.pool(server.url(), 1, Duration.ofMillis(250))) {
            PostgresStore.builder(bounded).table("startup_bounded_" + run).build();
            assertEquals(List.of(), log.messagesContaining("to lend a connection"), "a pool bounded as the docs say");

            PostgresStore.builder(slow).table("startup_slow_" + run).build();
            List<String> warnings = log.messagesContaining("to lend a connection");
            assertEquals(1, warnings.size(), warnings.toString());
            assertTrue(warnings.get(0).contains("30000 ms"), warnings.get(0));
            assertTrue(warnings.get(0).contains("Set the pool's connectionTimeout to 250 ms"), warnings.get(0));
        }
    }

    @Test
    void buildWaitsForTheDatabaseAndCreatesTheSchemaBeforeItReturns() throws Exception {
        String table = "startup_wait_" + run;
        try (HikariDataSource pool = Databases.pool(server.url(), 2, BORROW)) {
            server.stop();
            CompletableFuture<PostgresStore> built = CompletableFuture.supplyAsync(() -> PostgresStore.builder(pool)
                    .table(table)
                    .startupTimeout(Await.GENEROUS)
                    .build());
            server.restart();
            PostgresStore store = built.get(2 * Await.GENEROUS.toSeconds(), TimeUnit.SECONDS);
            assertEquals(
                    1,
                    Databases.queryLong(pool, "SELECT count(*) FROM pg_class WHERE relname = '" + table + "'"),
                    "build() waited for the database and created the table before returning");
            RateLimiter limiter = limiter(store, 5);
            Decision d = limiter.tryAcquire("first");
            assertTrue(d.allowed() && d.remaining() == 4, "the first decision is the database's: " + d);
            assertEquals(0, ((SharedRateLimiter) limiter).storeFailures(), "no decision went to the failure policy");
        } finally {
            server.restart();
        }
    }

    /**
     * The pool borrows within 250 ms, as the store's class comment asks: each try of the builds and the call while
     * the database is down waits that long for a connection, not {@link #BORROW}; the first decision after the restart
     * is awaited, and it leaves the pool a connection for the counter store's call.
     */
    @Test
    void aDatabaseThatDoesNotAnswerInTimeGivesAStoreAllTheSameThatCreatesItsSchemaOnceItAnswers() {
        String table = "startup_late_" + run;
        try (HikariDataSource pool = Databases.pool(server.url(), 2)) {
            server.stop();
            PostgresStore store = PostgresStore.builder(pool)
                    .table(table)
                    .startupTimeout(Duration.ofMillis(500))
                    .timeout(Duration.ofSeconds(10))
                    .failurePolicy(FailurePolicy.FAIL_CLOSED)
                    .failClosedRetryAfter(FAIL_CLOSED_RETRY_AFTER)
                    .build();
            CounterStore counters = PostgresStore.counterStoreBuilder(pool)
                    .table("startup_late_counter_" + run)
                    .startupTimeout(Duration.ofMillis(500))
                    .timeout(Duration.ofSeconds(10))
                    .build();
            RateLimiter limiter = limiter(store, 5);
            Decision d = limiter.tryAcquire("down");
            assertFalse(d.allowed(), "the failure policy answers while the database is down: " + d);
            assertEquals(FAIL_CLOSED_RETRY_AFTER, d.retryAfter(), "fail-closed: " + d);

            server.restart();
            Decision back = Await.succeeds("a decision by the database", Await.GENEROUS, () -> {
                Decision a = limiter.tryAcquire("up:" + System.nanoTime());
                if (a.failed()) {
                    throw new IllegalStateException("not yet: " + a);
                }
                return a;
            });
            assertTrue(back.allowed() && back.remaining() == 4, "a new key, decided by the database: " + back);
            assertEquals(
                    List.of(CounterSnapshot.absent()),
                    counters.load(List.of(new CounterKey("fw:3600000000000", "k"))),
                    "the counter store created its table at its first call");
        } finally {
            server.restart();
        }
    }

    @Test
    void aClosedPoolThrowsIllegalStateExceptionToTheCaller() {
        HikariDataSource pool = Databases.pool(server.url(), 2, BORROW);
        PostgresStore store = PostgresStore.builder(pool)
                .table("startup_closed_" + run)
                .timeout(Duration.ofSeconds(10))
                .failurePolicy(FailurePolicy.FAIL_OPEN)
                .build();
        CounterStore counters = PostgresStore.counterStoreBuilder(pool)
                .table("startup_closed_counter_" + run)
                .timeout(Duration.ofSeconds(10))
                .build();
        RateLimiter limiter = limiter(store, 5);
        RateLimiter other = limiter(store, 7);
        SharedRateLimiter shared = (SharedRateLimiter) limiter;
        CounterKey key = new CounterKey("fw:3600000000000", "k");
        assertEquals(4, limiter.tryAcquire("k").remaining(), "before the pool is closed");
        assertEquals(1, counters.load(List.of(key)).size(), "before the pool is closed");

        pool.close();

        for (Runnable call : List.<Runnable>of(
                () -> limiter.tryAcquire("k"),
                () -> limiter.peek("k", 1),
                () -> RateLimiter.tryAcquireAll(Acquisition.of(limiter, "k"), Acquisition.of(other, "k")),
                () -> counters.load(List.of(key)))) {
            IllegalStateException e = assertThrows(IllegalStateException.class, call::run);
            assertTrue(
                    e.getMessage().contains("DataSource") && e.getMessage().contains("has been closed"),
                    e.getMessage());
        }
        assertEquals(0, shared.storeFailures(), "a closed pool is not a store failure");
        IllegalStateException build = assertThrows(
                IllegalStateException.class, () -> PostgresStore.builder(pool).build());
        assertTrue(build.getMessage().contains("has been closed"), build.getMessage());
    }

    private static RateLimiter limiter(PostgresStore store, long limit) {
        return RateLimiter.builder(Algorithm.FIXED_WINDOW)
                .limit(limit, WINDOW)
                .store(store)
                .build();
    }
}
