package dev.sluice.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.FailurePolicy;
import dev.sluice.RateLimiter;
import dev.sluice.TimeSource;
import dev.sluice.testkit.ManualClock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link TimeSource#STORE}, the default: decisions are timed by Redis {@code TIME}, not by the limiter's clock (here
 * a clock stuck in the year 2000, which must play no part). What the script stored is bracketed by {@code TIME}
 * read just before and just after.
 */
class RedisStoreClockTest {

    private static final long HOUR_MICROS = 3_600_000_000L;
    private static RedisStore store;
    private final ManualClock year2000 = new ManualClock(Instant.parse("2000-01-01T00:00:00Z"));

    @BeforeAll
    static void connect() {
        store = RedisStore.builder(Servers.client())
                .failurePolicy(FailurePolicy.THROW)
                .timeout(Servers.PATIENCE)
                .build();
    }

    @AfterAll
    static void close() {
        store.close();
    }

    private RateLimiter limiter(Algorithm algorithm) {
        return RateLimiter.builder(algorithm)
                .limit(3, Duration.ofHours(1))
                .clock(year2000)
                .store(store)
                .build();
    }

    private static long redisMicros() {
        List<String> time = Servers.redis().time();
        return Long.parseLong(time.get(0)) * 1_000_000 + Long.parseLong(time.get(1));
    }

    @Test
    void theDefaultIsTheStoreClock() {
        try (RedisStore defaults = RedisStore.builder(Servers.client()).build()) {
            assertEquals(TimeSource.STORE, defaults.options().timeSource());
        }
    }

    @Test
    void slidingLogEntriesAreStampedWithRedisTime() {
        RateLimiter limiter = limiter(Algorithm.SLIDING_LOG);
        String key = "store-clock:" + UUID.randomUUID();
        long before = redisMicros();
        for (int i = 0; i < 3; i++) {
            assertTrue(limiter.tryAcquire(key).allowed());
        }
        long after = redisMicros();
        Decision denied = limiter.tryAcquire(key);
        assertFalse(denied.allowed());
        assertTrue(denied.retryAfterNanos() > 0 && denied.retryAfterNanos() <= HOUR_MICROS * 1000, denied.toString());

        Map<String, String> log = Servers.redis().hgetall(store.redisKey(key, limiter.config()));
        String[] oldest = log.get(log.get("h")).split(":");
        long expiry = Long.parseLong(oldest[0]);
        assertTrue(
                expiry >= before + HOUR_MICROS && expiry <= after + HOUR_MICROS,
                "the oldest entry expires an hour after Redis time " + before + ".." + after + ": " + expiry);
    }

    @Test
    void tokenBucketsRefillOnRedisTime() {
        RateLimiter limiter = limiter(Algorithm.TOKEN_BUCKET);
        String key = "store-clock:" + UUID.randomUUID();
        long before = redisMicros();
        assertTrue(limiter.tryAcquire(key, 3).allowed());
        long after = redisMicros();
        Decision denied = limiter.tryAcquire(key);
        assertFalse(denied.allowed());
        // one token per 20 min; a little of it may have refilled since the bucket was drained
        assertTrue(
                denied.retryAfterNanos() > 0 && denied.retryAfterNanos() <= HOUR_MICROS / 3 * 1000, denied.toString());
        long last = Servers.packedState(store.redisKey(key, limiter.config()))[2];
        assertTrue(last >= before && last <= after, "drained at Redis time " + before + ".." + after + ": " + last);
    }

    @Test
    void fixedWindowsAreAlignedOnRedisTime() {
        RateLimiter limiter = limiter(Algorithm.FIXED_WINDOW);
        String key = "store-clock:" + UUID.randomUUID();
        long before = redisMicros();
        assertTrue(limiter.tryAcquire(key).allowed());
        long after = redisMicros();
        long window = Servers.packedState(store.redisKey(key, limiter.config()))[0];
        assertTrue(
                window == before / HOUR_MICROS || window == after / HOUR_MICROS,
                "the window of Redis time " + before + ".." + after + ": " + window);
    }
}
