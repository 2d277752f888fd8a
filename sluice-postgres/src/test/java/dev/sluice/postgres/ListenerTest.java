package dev.sluice.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Acquisition;
import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.FailurePolicy;
import dev.sluice.JointDecision;
import dev.sluice.RateLimitListener;
import dev.sluice.RateLimiter;
import dev.sluice.TimeSource;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterStore;
import dev.sluice.testkit.ThrowingListener;
import java.lang.reflect.Proxy;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * Listeners that throw from every method change no decision, whether the store answers or fails; and the failures
 * the store recovers from by itself reach a listener.
 */
class ListenerTest {

    private static final Duration MINUTE = Duration.ofMinutes(1);

    private final dev.sluice.testkit.ManualClock clock =
            new dev.sluice.testkit.ManualClock(Instant.parse("2026-01-01T12:00:00Z"));
    private final String run = UUID.randomUUID().toString().substring(0, 8);

    private RateLimiter limiter(
            Algorithm algorithm, long limit, Duration window, PostgresStore store, RateLimitListener listener) {
        return RateLimiter.builder(algorithm)
                .limit(limit, window)
                .clock(clock)
                .listener(listener)
                .store(store)
                .build();
    }

    private RateLimiter memory(Algorithm algorithm, long limit, Duration window) {
        return RateLimiter.builder(algorithm).limit(limit, window).clock(clock).build();
    }

    @Test
    void aThrowingListenerChangesNoDecision() {
        ThrowingListener onStore = new ThrowingListener();
        ThrowingListener onLimiter = new ThrowingListener();
        PostgresStore store = PostgresStore.builder(Databases.shared())
                .table("sluice_listener")
                .timeSource(TimeSource.CLOCK)
                .failurePolicy(FailurePolicy.THROW)
                .timeout(Databases.PATIENCE)
                .listener(onStore)
                .build();
        RateLimiter perSecond = limiter(Algorithm.TOKEN_BUCKET, 3, Duration.ofSeconds(1), store, onLimiter);
        RateLimiter perMinute = limiter(Algorithm.SLIDING_TAIL, 5, MINUTE, store, onLimiter);
        RateLimiter memorySecond = memory(Algorithm.TOKEN_BUCKET, 3, Duration.ofSeconds(1));
        RateLimiter memoryMinute = memory(Algorithm.SLIDING_TAIL, 5, MINUTE);
        String key = "throwing:" + run;
        for (int i = 0; i < 8; i++) {
            assertEquals(memorySecond.tryAcquire(key, 1), perSecond.tryAcquire(key, 1), "tryAcquire " + i);
            JointDecision expected =
                    RateLimiter.tryAcquireAll(Acquisition.of(memorySecond, key), Acquisition.of(memoryMinute, key));
            assertEquals(
                    expected,
                    RateLimiter.tryAcquireAll(Acquisition.of(perSecond, key), Acquisition.of(perMinute, key)),
                    "joint request " + i);
            clock.advance(Duration.ofMillis(400));
        }
        assertEquals(8 + 16, onStore.decisions(), "decisions the store's listener heard");
        assertEquals(8 + 16, onLimiter.decisions(), "decisions the limiters' listener heard");
        assertEquals(8 + 16, onStore.calls(), "store calls heard: one per tryAcquire, one per part of a joint");
        assertEquals(List.of(), onStore.failures(), "failures heard");
    }

    @Test
    void aThrowingListenerChangesNoFailurePolicyAnswer() {
        for (FailurePolicy policy : List.of(FailurePolicy.FAIL_OPEN, FailurePolicy.FAIL_CLOSED)) {
            ThrowingListener onStore = new ThrowingListener();
            // No startup wait: build() would spend all of it (10 s by default) trying a database that never answers,
            // and a builder's tries are nobody's to hear; the calls below are what the listeners hear.
            PostgresStore down = PostgresStore.builder(unreachable())
                    .table("sluice_listener")
                    .timeSource(TimeSource.CLOCK)
                    .failurePolicy(policy)
                    .createSchema(false)
                    .startupTimeout(Duration.ZERO)
                    .failClosedRetryAfter(Duration.ofSeconds(2))
                    .listener(onStore)
                    .build();
            RateLimiter a = limiter(Algorithm.FIXED_WINDOW, 10, MINUTE, down, new ThrowingListener());
            RateLimiter b = limiter(Algorithm.LEAKY_BUCKET, 10, MINUTE, down, new ThrowingListener());
            boolean open = policy == FailurePolicy.FAIL_OPEN;

            Decision d = a.tryAcquire("k", 3);
            assertEquals(true, d.failed(), policy + ": " + d);
            assertEquals(open, d.allowed(), policy + ": " + d);
            assertEquals(open ? 7 : 0, d.remaining(), policy + ": " + d);

            JointDecision joint = RateLimiter.tryAcquireAll(Acquisition.of(a, "k", 3), Acquisition.of(b, "k", 1));
            assertEquals(open, joint.allowed(), policy + ": " + joint);
            for (Decision part : joint.decisions()) {
                assertEquals(true, part.failed(), policy + ": " + joint);
                assertEquals(open ? 0 : Duration.ofSeconds(2).toNanos(), part.retryAfterNanos(), policy + ": " + joint);
            }
            assertEquals(3, onStore.failures().size(), policy + ": failures heard (1 + one per part)");
            assertEquals(3, onStore.calls(), policy + ": store calls heard");
            assertEquals(3, onStore.decisions(), policy + ": decisions heard");
        }
    }

    @Test
    void aSchemaCreatedAgainIsHeardAsAFailureTheCallRecoveredFrom() throws SQLException {
        String table = "sluice_listener_" + run;
        ThrowingListener onStore = new ThrowingListener();
        try {
            PostgresStore store = PostgresStore.builder(Databases.shared())
                    .table(table)
                    .timeSource(TimeSource.CLOCK)
                    .failurePolicy(FailurePolicy.THROW)
                    .timeout(Databases.PATIENCE)
                    .listener(onStore)
                    .build();
            RateLimiter limiter = limiter(Algorithm.FIXED_WINDOW, 2, MINUTE, store, RateLimitListener.NONE);
            assertEquals(1, limiter.tryAcquire("k", 1).remaining());
            Databases.execute(Databases.shared(), "DROP FUNCTION " + table + "_decide_batch");
            JointDecision d = RateLimiter.tryAcquireAll(Acquisition.of(limiter, "k"));
            assertEquals(0, d.decision(0).remaining(), "decided after the function was created again: " + d);
            assertEquals(1, onStore.failures().size(), "failures heard: " + onStore.failures());
            assertTrue(
                    onStore.failures().get(0).getMessage().contains("creating them again"),
                    onStore.failures().get(0).getMessage());
            assertEquals(1, onStore.failures().size(), "one failure heard");
            assertEquals(1, onStore.failuresOfStoreWork(), "no limiter: the store's own work");
        } finally {
            Databases.execute(Databases.shared(), "DROP TABLE IF EXISTS " + table + " CASCADE");
        }
    }

    @Test
    void theCounterStoreTellsItsCallTimesAndAnswersDespiteAThrowingListener() {
        ThrowingListener listener = new ThrowingListener();
        CounterStore counters = PostgresStore.counterStoreBuilder(Databases.shared())
                .table("sluice_counter")
                .timeout(Databases.PATIENCE)
                .listener(listener)
                .build();
        CounterKey key = new CounterKey("fw:60000000000", "listened:" + run);
        assertEquals(1, counters.load(List.of(key)).size());
        assertEquals(1, listener.calls(), "calls heard");
    }

    /** A DataSource whose every connection attempt fails at once. */
    private static DataSource unreachable() {
        return (DataSource) Proxy.newProxyInstance(
                ListenerTest.class.getClassLoader(), new Class<?>[] {DataSource.class}, (p, method, args) -> {
                    if (method.getName().equals("getConnection")) {
                        throw new SQLTransientConnectionException("the database is down");
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
    }
}
