package dev.sluice.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.Acquisition;
import dev.sluice.Algorithm;
import dev.sluice.RateLimiter;
import dev.sluice.testkit.ManualClock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Concurrent decisions share round trips ({@link RedisBatches}) and stay exact: 64 threads on one key admit exactly
 * the limit, and joint requests decided in the same batches stay all or nothing. On a standalone Redis and a cluster.
 */
class RedisBatchesTest {

    private static final int THREADS = 64;
    private static final int REQUESTS_PER_THREAD = 8;
    private static final Instant NOON = Instant.parse("2026-01-01T12:00:05Z");

    @RegisterExtension
    static final ContendedRedis shared = new ContendedRedis(THREADS);

    /** The stores by name: a store given as an argument would be closed by JUnit after its first test. */
    static Stream<String> stores() {
        return Stream.of("standalone", "cluster");
    }

    /** 64 × 8 requests on one key under a limit of 300: exactly 300 admitted, whatever the batches were. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("stores")
    void sixtyFourThreadsOnOneKeyAdmitExactlyTheLimit(String name) throws Exception {
        RedisStore store = shared.store(name);
        for (Algorithm algorithm : List.of(Algorithm.FIXED_WINDOW, Algorithm.SLIDING_LOG, Algorithm.TOKEN_BUCKET)) {
            RateLimiter limiter = RateLimiter.builder(algorithm)
                    .limit(300, Duration.ofMinutes(1))
                    .clock(new ManualClock(NOON))
                    .store(store)
                    .build();
            String key = "batched:" + UUID.randomUUID();
            int admitted = onAllThreads(() -> limiter.tryAcquire(key).allowed());
            assertEquals(300, admitted, algorithm + ": admitted of " + THREADS * REQUESTS_PER_THREAD);
        }
    }

    /**
     * 64 × 8 joint requests over a limit of 200 and one of 400 on one key: exactly 200 admitted, and the limit of
     * 400 has exactly 200 left, so no refused request took from it.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("stores")
    void jointRequestsInBatchesAreAllOrNothing(String name) throws Exception {
        RedisStore store = shared.store(name);
        ManualClock clock = new ManualClock(NOON);
        RateLimiter low = RateLimiter.builder(Algorithm.FIXED_WINDOW)
                .limit(200, Duration.ofMinutes(1))
                .clock(clock)
                .store(store)
                .build();
        RateLimiter high = RateLimiter.builder(Algorithm.TOKEN_BUCKET)
                .limit(400, Duration.ofHours(1))
                .clock(clock)
                .store(store)
                .build();
        String key = "joint-batched:" + UUID.randomUUID();
        int admitted = onAllThreads(() -> RateLimiter.tryAcquireAll(Acquisition.of(high, key), Acquisition.of(low, key))
                .allowed());
        assertEquals(200, admitted, "joint requests admitted of " + THREADS * REQUESTS_PER_THREAD);
        assertEquals(200, high.peek(key, 1).remaining(), "left of the limit of 400");
        assertEquals(0, low.peek(key, 1).remaining(), "left of the limit of 200");
    }

    /** Runs {@code request} {@value #REQUESTS_PER_THREAD} times on each of 64 threads started together; the passes. */
    private static int onAllThreads(Callable<Boolean> request) throws Exception {
        return shared.passes(REQUESTS_PER_THREAD, request);
    }
}
