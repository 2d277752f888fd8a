package dev.sluice.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.FailurePolicy;
import dev.sluice.RateLimiter;
import dev.sluice.SluiceException;
import dev.sluice.TimeSource;
import dev.sluice.spi.AtomicDecider;
import dev.sluice.spi.StoreDecision;
import dev.sluice.testkit.Await;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A batch that runs past the deadline of one request it decided is rolled back by the batch function, nothing taken;
 * the other requests of the batch, still in time, are sent again without it and answered, each taken exactly once.
 *
 * <p>A trigger on the test's table makes PostgreSQL sleep {@link #SLOW} when it writes a row whose key holds "slow":
 * a first request on such a key holds the batch in flight while a late-to-be request (its deadline {@link #LATE} away)
 * and one with time to spare queue behind it; their batch decides both, then sleeps writing the first one's row,
 * past its deadline.
 */
class LateRequestTest {

    private static final String TABLE = "sluice_late";
    private static final Duration SLOW = Duration.ofSeconds(1);
    /** Past the end of the batch in flight (at most {@link #SLOW} away), before the end of the next (two away). */
    private static final Duration LATE = Duration.ofMillis(1600);

    private static final DataSource DATA = Databases.shared();
    private static final ExecutorService CALLERS = Executors.newFixedThreadPool(3);
    private static PostgresStore store;
    private static RateLimiter limiter;

    @BeforeAll
    static void tableWithASlowTrigger() throws SQLException {
        store = PostgresStore.builder(DATA)
                .table(TABLE)
                .timeSource(TimeSource.CLOCK)
                .failurePolicy(FailurePolicy.THROW)
                .timeout(Databases.PATIENCE)
                .build();
        limiter = RateLimiter.builder(Algorithm.FIXED_WINDOW)
                .limit(5, Duration.ofHours(1))
                .store(store)
                .build();
        limiter.tryAcquire("warm"); // creates the table
        Databases.execute(DATA, "TRUNCATE " + TABLE);
        Databases.execute(
                DATA,
                "CREATE OR REPLACE FUNCTION " + TABLE + "_slow() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
                        + " IF NEW.key LIKE '%slow%' THEN PERFORM pg_sleep(" + SLOW.toMillis() / 1000.0 + "); END IF;"
                        + " RETURN NEW; END $$");
        Databases.execute(DATA, "DROP TRIGGER IF EXISTS " + TABLE + "_slow ON " + TABLE);
        Databases.execute(
                DATA,
                "CREATE TRIGGER " + TABLE + "_slow BEFORE UPDATE ON " + TABLE + " FOR EACH ROW EXECUTE FUNCTION "
                        + TABLE + "_slow()");
    }

    @AfterAll
    static void stop() throws SQLException {
        CALLERS.shutdownNow();
        Databases.execute(DATA, "DROP TRIGGER IF EXISTS " + TABLE + "_slow ON " + TABLE);
    }

    @Test
    void theRequestsInTimeOfABatchRolledBackForALateOneAreAnswered() throws Exception {
        PostgresDecider decider = new PostgresDecider(store, limiter.config());
        Future<List<StoreDecision>> first = decide(decider, "slow-first", Databases.PATIENCE);
        Await.until("the first batch sleeping in its trigger", Await.GENEROUS, LateRequestTest::sleeping);
        Future<List<StoreDecision>> late = decide(decider, "slow-late", LATE);
        Future<List<StoreDecision>> inTime = decide(decider, "in-time", Databases.PATIENCE);

        assertTrue(first.get(1, TimeUnit.MINUTES).get(0).allowed());
        StoreDecision answered = inTime.get(1, TimeUnit.MINUTES).get(0);
        assertTrue(answered.allowed(), "the request in time was answered: " + answered);
        assertEquals(4, answered.remaining());
        ExecutionException e = assertThrows(ExecutionException.class, () -> late.get(1, TimeUnit.MINUTES));
        assertInstanceOf(SluiceException.class, e.getCause());

        assertEquals(3, limiter.tryAcquire("in-time").remaining(), "the request in time was taken once");
        assertEquals(
                0,
                Databases.queryLong(DATA, "SELECT count(*) FROM " + TABLE + " WHERE key LIKE '%slow-late%'"),
                "the late request took nothing");
    }

    private static Future<List<StoreDecision>> decide(PostgresDecider decider, String key, Duration deadline) {
        long at = System.nanoTime() + deadline.toNanos();
        return CALLERS.submit(() -> store.batches()
                .decide(List.of(new PostgresBatches.Part(decider, key, 1, AtomicDecider.STORE_TIME)), false, at));
    }

    private static boolean sleeping() {
        try {
            return Databases.queryLong(
                            DATA,
                            "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND query LIKE '%"
                                    + TABLE + "%'")
                    > 0;
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
