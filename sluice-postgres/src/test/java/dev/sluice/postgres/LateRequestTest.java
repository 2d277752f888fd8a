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
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A batch that runs past the deadline of one request it decided is rolled back by the batch function, nothing taken;
 * the other requests of the batch, still in time, are sent again without it and answered, each taken exactly once.
 *
 * <p>A trigger on the test's table makes PostgreSQL wait, writing a row, for an advisory lock the test holds: {@link
 * #HOLD} for a row whose key holds "hold", {@link #LATE} for one whose key holds "late". A first request on a "hold" key
 * keeps its batch in flight while a request on a "late" key and one with time to spare queue behind it; once both
 * wait, the test lets the first go; the next batch decides both and waits writing the late one's row until the test,
 * past that request's deadline, lets it go too. Every step waits for a condition, not for time.
 */
class LateRequestTest {

    private static final String TABLE = "sluice_late";
    private static final int HOLD = 91_001;
    private static final int LATE = 91_002;
    /** The late request's deadline: time enough, on a loaded machine, for its batch to be sent before it. */
    private static final Duration DEADLINE = Duration.ofSeconds(2);

    private static final DataSource DATA = Databases.shared();
    private static final List<Thread> CALLER_THREADS = new CopyOnWriteArrayList<>();
    private static final ExecutorService CALLERS = Executors.newFixedThreadPool(3, r -> {
        Thread t = new Thread(r, "late-request-caller");
        t.setDaemon(true);
        CALLER_THREADS.add(t);
        return t;
    });
    private static PostgresStore store;
    private static RateLimiter limiter;

    @BeforeAll
    static void tableWithAHoldingTrigger() throws SQLException {
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
                "CREATE OR REPLACE FUNCTION " + TABLE + "_hold() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
                        + " IF NEW.key LIKE '%hold%' THEN PERFORM pg_advisory_xact_lock_shared(" + HOLD + "); END IF;"
                        + " IF NEW.key LIKE '%late%' THEN PERFORM pg_advisory_xact_lock_shared(" + LATE + "); END IF;"
                        + " RETURN NEW; END $$");
        Databases.execute(DATA, "DROP TRIGGER IF EXISTS " + TABLE + "_hold ON " + TABLE);
        Databases.execute(
                DATA,
                "CREATE TRIGGER " + TABLE + "_hold BEFORE UPDATE ON " + TABLE + " FOR EACH ROW EXECUTE FUNCTION "
                        + TABLE + "_hold()");
    }

    @AfterAll
    static void stop() throws SQLException {
        CALLERS.shutdownNow();
        Databases.execute(DATA, "DROP TRIGGER IF EXISTS " + TABLE + "_hold ON " + TABLE);
    }

    @Test
    void theRequestsInTimeOfABatchRolledBackForALateOneAreAnswered() throws Exception {
        PostgresDecider decider = new PostgresDecider(store, limiter.config());
        Future<List<StoreDecision>> late;
        Future<List<StoreDecision>> inTime;
        try (Connection locks = DATA.getConnection();
                Statement s = locks.createStatement()) {
            s.execute("SELECT pg_advisory_lock(" + HOLD + "), pg_advisory_lock(" + LATE + ")");

            Future<List<StoreDecision>> first = decide(decider, "hold-first", Databases.PATIENCE);
            Await.until("the first batch held by its trigger", Await.GENEROUS, () -> waitingOn(HOLD));
            long lateDeadline = System.nanoTime() + DEADLINE.toNanos();
            late = decide(decider, "late", lateDeadline);
            inTime = decide(decider, "in-time", Databases.PATIENCE);
            Await.until("both requests waiting for the next batch", Await.GENEROUS, () -> waitingInBatches() == 2);
            s.execute("SELECT pg_advisory_unlock(" + HOLD + ")");
            assertTrue(first.get(1, TimeUnit.MINUTES).get(0).allowed());

            // the next batch waits writing the late request's row, or the late request was dropped unsent
            Future<List<StoreDecision>> dropped = late;
            Await.until(
                    "the late request's deadline passed, its batch waiting on its row",
                    Await.GENEROUS,
                    () -> System.nanoTime() - lateDeadline > 0 && (waitingOn(LATE) || dropped.isDone()));
            s.execute("SELECT pg_advisory_unlock(" + LATE + ")");
        }

        StoreDecision answered = inTime.get(1, TimeUnit.MINUTES).get(0);
        assertTrue(answered.allowed(), "the request in time was answered: " + answered);
        assertEquals(4, answered.remaining());
        ExecutionException e = assertThrows(ExecutionException.class, () -> late.get(1, TimeUnit.MINUTES));
        assertInstanceOf(SluiceException.class, e.getCause());
        assertInstanceOf(TimeoutException.class, e.getCause().getCause(), "told as a timeout: " + e.getCause());

        assertEquals(3, limiter.tryAcquire("in-time").remaining(), "the request in time was taken once");
        assertEquals(
                0,
                Databases.queryLong(DATA, "SELECT count(*) FROM " + TABLE + " WHERE key LIKE '%late%'"),
                "the late request took nothing");
    }

    private static Future<List<StoreDecision>> decide(PostgresDecider decider, String key, Duration deadline) {
        return decide(decider, key, System.nanoTime() + deadline.toNanos());
    }

    private static Future<List<StoreDecision>> decide(PostgresDecider decider, String key, long deadlineNanos) {
        return CALLERS.submit(() -> store.batches()
                .decide(
                        List.of(new PostgresBatches.Part(decider, key, 1, AtomicDecider.STORE_TIME)),
                        false,
                        deadlineNanos));
    }

    /** Whether a call of this test's table waits for the advisory lock {@code key}. */
    private static boolean waitingOn(int key) {
        try {
            return Databases.queryLong(
                            DATA,
                            "SELECT count(*) FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid"
                                    + " WHERE NOT l.granted AND l.locktype = 'advisory' AND l.objid = " + key
                                    + " AND a.query LIKE '%" + TABLE + "%'")
                    > 0;
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** How many of the callers' threads wait in a batch's queue for their answer. */
    private static long waitingInBatches() {
        return CALLER_THREADS.stream()
                .filter(t -> t.getState() == Thread.State.TIMED_WAITING
                        && Arrays.stream(t.getStackTrace())
                                .anyMatch(f -> f.getClassName().equals("dev.sluice.spi.GroupCommit")
                                        && f.getMethodName().equals("decide")))
                .count();
    }
}
