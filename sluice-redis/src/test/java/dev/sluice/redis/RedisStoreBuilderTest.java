package dev.sluice.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.sluice.Algorithm;
import dev.sluice.RateLimiter;
import io.lettuce.core.RedisClient;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** Configurations Redis cannot hold are refused when the limiter is built, with a message naming the value. */
class RedisStoreBuilderTest {

    // Nothing listens on port 1: binding a limiter needs no server.
    private static RedisClient client;
    private static RedisStore store;

    @BeforeAll
    static void create() {
        client = RedisClient.create("redis://127.0.0.1:1");
        store = RedisStore.builder(client).build();
    }

    @AfterAll
    static void close() {
        store.close();
        client.shutdown();
    }

    private static void assertRefused(String message, Executable build) {
        assertEquals(
                message, assertThrows(IllegalArgumentException.class, build).getMessage());
    }

    @Test
    void aWindowOfFractionalMicrosecondsIsRefused() {
        assertRefused("window must be a whole number of microseconds on Redis, was 1500ns", () -> RateLimiter.builder(
                        Algorithm.TOKEN_BUCKET)
                .limit(1, Duration.ofNanos(1500))
                .store(store)
                .build());
    }

    @Test
    void aLimitBeyondTwoToThe52IsRefused() {
        assertRefused("limit must be at most 2^52 on Redis, was 4503599627370497", () -> RateLimiter.builder(
                        Algorithm.SLIDING_LOG)
                .limit((1L << 52) + 1, Duration.ofSeconds(1))
                .store(store)
                .build());
        RateLimiter.builder(Algorithm.SLIDING_LOG)
                .limit(1L << 52, Duration.ofSeconds(1))
                .store(store)
                .build();
    }

    @Test
    void subWindowsShorterThanAMicrosecondAreRefused() {
        assertRefused(
                "buckets must be at most the window in microseconds (10) on Redis, was 11",
                () -> RateLimiter.builder(Algorithm.SLIDING_WINDOW_COUNTER)
                        .limit(1, Duration.ofNanos(10_000))
                        .buckets(11)
                        .store(store)
                        .build());
    }

    @Test
    void aNegativeExpiryMarginIsRefused() {
        assertRefused("expiryMargin must be >= 0, was -1s", () -> RedisStore.builder(client)
                .expiryMargin(Duration.ofSeconds(-1)));
    }
}
