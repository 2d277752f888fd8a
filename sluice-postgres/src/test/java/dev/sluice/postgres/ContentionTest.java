package dev.sluice.postgres;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.Algorithm;
import dev.sluice.FailurePolicy;
import dev.sluice.LimiterConfig;
import dev.sluice.RateLimiter;
import dev.sluice.RateLimiterBuilder;
import dev.sluice.TimeSource;
import dev.sluice.spi.SharedRateLimiter;
import dev.sluice.testkit.ManualClock;
import dev.sluice.testkit.server.PostgresServers;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Four limiters, as four service instances: each with its own pool of 16 connections and 16 threads, all on one key
 * of limit L. Exactly L requests pass, and the row holds exactly what they (and, when counted, the rejections) took.
 * The timeouts are generous: 64 threads queue for one row on a small machine, and this test is about exactness.
 */
class ContentionTest {

    private static final int INSTANCES = 4;
    private static final int THREADS = 16;
    private static final int ATTEMPTS = 10; // per thread: 640 in all
    private static final long LIMIT = 200;
    private static final Duration WINDOW = Duration.ofSeconds(60);
    private static final Instant NOW = Instant.parse("2026-01-01T12:00:07Z");
    private static final long NOW_NANOS = NOW.getEpochSecond() * 1_000_000_000L;
    private static final Duration PATIENCE = Duration.ofSeconds(30);

    private static final List<HikariDataSource> pools = new ArrayList<>();
    private static final List<PostgresStore> stores = new ArrayList<>();

    @BeforeAll
    static void startInstances() {
        String url = PostgresServers.shared();
        for (int i = 0; i < INSTANCES; i++) {
            HikariDataSource pool = Databases.pool(url, THREADS, PATIENCE);
            pools.add(pool);
            stores.add(PostgresStore.builder(pool)
                    .table("sluice_contention")
                    .timeSource(TimeSource.CLOCK)
                    .failurePolicy(FailurePolicy.THROW)
                    .timeout(PATIENCE)
                    .build());
        }
    }

    @AfterAll
    static void stopInstances() {
        pools.forEach(HikariDataSource::close);
    }

    /** Runs every thread of every instance against {@code key}; returns how many were admitted. */
    private static int hammer(List<RateLimiter> limiters, String key) throws Exception {
        ExecutorService threads = Executors.newFixedThreadPool(INSTANCES * THREADS);
        try {
            CountDownLatch start = new CountDownLatch(1);
            AtomicInteger admitted = new AtomicInteger();
            List<Future<?>> done = new ArrayList<>();
            for (RateLimiter limiter : limiters) {
                for (int t = 0; t < THREADS; t++) {
                    done.add(threads.submit(() -> {
                        start.await();
                        for (int i = 0; i < ATTEMPTS; i++) {
                            if (limiter.tryAcquire(key).allowed()) {
                                admitted.incrementAndGet();
                            }
                        }
                        return null;
                    }));
                }
            }
            start.countDown();
            for (Future<?> f : done) {
                f.get(2, TimeUnit.MINUTES);
            }
            return admitted.get();
        } finally {
            threads.shutdownNow();
        }
    }

    private static List<RateLimiter> limiters(
            Algorithm algorithm, ManualClock clock, UnaryOperator<RateLimiterBuilder> options) {
        List<RateLimiter> limiters = new ArrayList<>();
        for (PostgresStore store : stores) {
            limiters.add(options.apply(
                            RateLimiter.builder(algorithm).limit(LIMIT, WINDOW).clock(clock))
                    .store(store)
                    .build());
        }
        return limiters;
    }

    /** The row of {@code key}: win, cur, prev, frac, tat, last, expiries, weights. */
    private static Object[] row(RateLimiter limiter, String key) throws SQLException {
        LimiterConfig config = limiter.config();
        PostgresStore store = stores.get(0);
        byte[] id = new PostgresDecider(store, config).id(key);
        try (Connection c = store.dataSource().getConnection();
                PreparedStatement s =
                        c.prepareStatement("SELECT win, cur, prev, frac, tat, last, expiries, weights FROM "
                                + store.table() + " WHERE id = ?")) {
            s.setBytes(1, id);
            try (ResultSet rs = s.executeQuery()) {
                if (!rs.next()) {
                    throw new AssertionError("no row for " + key);
                }
                Object[] row = new Object[8];
                for (int i = 0; i < 6; i++) {
                    row[i] = rs.getObject(i + 1);
                }
                row[6] = longs(rs.getArray(7));
                row[7] = longs(rs.getArray(8));
                return row;
            }
        }
    }

    private static long[] longs(Array a) throws SQLException {
        if (a == null) {
            return null;
        }
        Long[] boxed = (Long[]) a.getArray();
        long[] out = new long[boxed.length];
        for (int i = 0; i < boxed.length; i++) {
            out[i] = boxed[i];
        }
        return out;
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void exactlyTheLimitPassesAndTheRowAgrees(Algorithm algorithm) throws Exception {
        ManualClock clock = new ManualClock(NOW);
        List<RateLimiter> limiters =
                limiters(algorithm, clock, b -> algorithm == Algorithm.SLIDING_WINDOW_COUNTER ? b.buckets(4) : b);
        String key = "contention:" + UUID.randomUUID();

        assertEquals(LIMIT, hammer(limiters, key), algorithm + ": admitted");

        Object[] row = row(limiters.get(0), key);
        long w = WINDOW.toNanos();
        switch (algorithm) {
            case FIXED_WINDOW:
                assertEquals(NOW_NANOS / w, row[0], "window index");
                assertEquals(LIMIT, row[1], "count");
                break;
            case SLIDING_TAIL:
                assertEquals(NOW_NANOS / w, row[0], "window index");
                assertEquals(LIMIT, row[1], "current count");
                assertEquals(0L, row[2], "previous count");
                break;
            case TOKEN_BUCKET:
                assertEquals(0L, row[1], "tokens");
                assertEquals(0L, row[3], "fraction");
                assertEquals(NOW_NANOS, row[5], "last refill");
                break;
            case LEAKY_BUCKET:
                assertEquals(0L, row[3], "fraction");
                assertEquals(NOW_NANOS + w, row[4], "tat: a full bucket drains in one window");
                assertEquals(NOW_NANOS, row[5], "the newest time seen");
                break;
            case SLIDING_LOG:
                assertArrayEquals(new long[] {NOW_NANOS + w}, (long[]) row[6], "one entry: one instant");
                assertArrayEquals(new long[] {LIMIT}, (long[]) row[7], "its weight");
                break;
            case SLIDING_WINDOW_COUNTER:
                long sub = w / 4;
                assertArrayEquals(new long[] {NOW_NANOS / sub * sub + w}, (long[]) row[6], "one sub-window");
                assertArrayEquals(new long[] {LIMIT}, (long[]) row[7], "its count");
                break;
            default:
                throw new AssertionError(algorithm);
        }
        assertEquals(false, limiters.get(1).peek(key, 1).allowed(), "the key is spent for every instance");
        for (RateLimiter limiter : limiters) {
            assertEquals(0, ((SharedRateLimiter) limiter).storeFailures(), "store failures");
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = Algorithm.class,
            names = {"FIXED_WINDOW", "SLIDING_LOG"})
    void countedRejectionsAreNeverLost(Algorithm algorithm) throws Exception {
        ManualClock clock = new ManualClock(NOW);
        List<RateLimiter> limiters = limiters(algorithm, clock, b -> b.countRejected(true));
        String key = "contention-counted:" + UUID.randomUUID();

        assertEquals(LIMIT, hammer(limiters, key), algorithm + ": admitted");

        long attempts = (long) INSTANCES * THREADS * ATTEMPTS;
        Object[] row = row(limiters.get(0), key);
        if (algorithm == Algorithm.FIXED_WINDOW) {
            assertEquals(attempts, row[1], "every attempt counted");
        } else {
            assertArrayEquals(new long[] {attempts}, (long[]) row[7], "every attempt logged");
        }
    }

    @Test
    void exactlyTheLimitPassesOnTheStoresClock() throws Exception {
        List<RateLimiter> limiters = new ArrayList<>();
        for (HikariDataSource pool : pools) {
            PostgresStore store = PostgresStore.builder(pool)
                    .table("sluice_contention")
                    .failurePolicy(FailurePolicy.THROW)
                    .timeout(PATIENCE)
                    .build();
            limiters.add(RateLimiter.builder(Algorithm.SLIDING_LOG)
                    .limit(LIMIT, Duration.ofHours(1))
                    .store(store)
                    .build());
        }
        String key = "contention-store-clock:" + UUID.randomUUID();

        assertEquals(LIMIT, hammer(limiters, key), "admitted within an hour of the store's clock");

        long[] weights = (long[]) row(limiters.get(0), key)[7];
        long sum = 0;
        for (long weight : weights) {
            sum += weight;
        }
        assertEquals(LIMIT, sum, "permits held by the log");
    }
}
