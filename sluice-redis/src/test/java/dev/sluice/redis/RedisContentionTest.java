package dev.sluice.redis;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.FailurePolicy;
import dev.sluice.LimiterConfig;
import dev.sluice.RateLimiter;
import dev.sluice.TimeSource;
import dev.sluice.testkit.ManualClock;
import dev.sluice.testkit.server.RedisServers;
import io.lettuce.core.RedisClient;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Four limiter instances, each with its own client and connection (as four service instances would have), 16
 * threads each, all on one key: exactly the limit is admitted, and the state stored in Redis says so.
 */
class RedisContentionTest {

    private static final int INSTANCES = 4;
    private static final int THREADS_PER_INSTANCE = 16;
    private static final int ATTEMPTS_PER_THREAD = 20;
    private static final long LIMIT = 500;
    private static final Duration WINDOW = Duration.ofHours(1);
    private static final Instant NOW = Instant.parse("2026-01-01T12:00:05Z");

    private static final List<RedisClient> clients = new ArrayList<>();
    private static final List<RedisStore> stores = new ArrayList<>();
    private static ExecutorService threads;

    @BeforeAll
    static void connect() {
        for (int i = 0; i < INSTANCES; i++) {
            RedisClient client = RedisClient.create(RedisServers.shared().uri());
            client.setOptions(RedisStore.recommendedClientOptions());
            clients.add(client);
            stores.add(RedisStore.builder(client)
                    .timeSource(TimeSource.CLOCK)
                    .failurePolicy(FailurePolicy.THROW)
                    .timeout(Servers.PATIENCE)
                    .build());
        }
        threads = Executors.newFixedThreadPool(INSTANCES * THREADS_PER_INSTANCE);
    }

    @AfterAll
    static void close() throws InterruptedException {
        threads.shutdownNow();
        threads.awaitTermination(10, TimeUnit.SECONDS);
        stores.forEach(RedisStore::close);
        clients.forEach(RedisClient::shutdown);
    }

    /** The clock stands still, so nothing refills or expires during the run: exactly the limit can pass. */
    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void exactlyTheLimitIsAdmitted(Algorithm algorithm) throws Exception {
        ManualClock clock = new ManualClock(NOW);
        List<RateLimiter> limiters = new ArrayList<>();
        for (RedisStore store : stores) {
            limiters.add(RateLimiter.builder(algorithm)
                    .limit(LIMIT, WINDOW)
                    .clock(clock)
                    .store(store)
                    .build());
        }
        String key = "contended:" + UUID.randomUUID();
        CyclicBarrier start = new CyclicBarrier(INSTANCES * THREADS_PER_INSTANCE);
        List<Future<Integer>> admitted = new ArrayList<>();
        for (int t = 0; t < INSTANCES * THREADS_PER_INSTANCE; t++) {
            RateLimiter limiter = limiters.get(t % INSTANCES);
            admitted.add(threads.submit(() -> {
                start.await(30, TimeUnit.SECONDS);
                int n = 0;
                for (int i = 0; i < ATTEMPTS_PER_THREAD; i++) {
                    if (limiter.tryAcquire(key).allowed()) {
                        n++;
                    }
                }
                return n;
            }));
        }
        int total = 0;
        for (Future<Integer> f : admitted) {
            total += f.get(120, TimeUnit.SECONDS);
        }
        assertEquals(
                LIMIT,
                total,
                algorithm + ": admitted of " + INSTANCES * THREADS_PER_INSTANCE * ATTEMPTS_PER_THREAD + " attempts");

        LimiterConfig config = limiters.get(0).config();
        String redisKey = stores.get(0).redisKey(key, config);
        long nowMicros = NOW.getEpochSecond() * 1_000_000;
        long windowMicros = WINDOW.toNanos() / 1000;
        switch (algorithm) {
            case FIXED_WINDOW: // window index, count
                assertArrayEquals(new long[] {nowMicros / windowMicros, 500}, Servers.packedState(redisKey));
                break;
            case SLIDING_TAIL: // window index, current count, previous count
                assertArrayEquals(new long[] {nowMicros / windowMicros, 500, 0}, Servers.packedState(redisKey));
                break;
            case TOKEN_BUCKET: // tokens, fraction, last refill, last seen full
                assertArrayEquals(new long[] {0, 0, nowMicros, nowMicros}, Servers.packedState(redisKey));
                break;
            case LEAKY_BUCKET: // 500 requests of W/500 each: full to exactly now + W; last seen, last seen empty
                assertArrayEquals(
                        new long[] {nowMicros + windowMicros, 0, nowMicros, nowMicros}, Servers.packedState(redisKey));
                break;
            case SLIDING_LOG: // all at one instant: one entry of weight 500
                assertEquals(
                        Map.of("h", "0", "n", "1", "b", "0", "0", (nowMicros + windowMicros) + ":500"),
                        Servers.redis().hgetall(redisKey));
                break;
            case SLIDING_WINDOW_COUNTER: // one sub-window (of 1 min), expiring a window after its start
                long subWindow = windowMicros / LimiterConfig.DEFAULT_BUCKETS;
                long subWindowStart = nowMicros - nowMicros % subWindow;
                assertEquals(
                        Map.of("h", "0", "n", "1", "b", "0", "0", (subWindowStart + windowMicros) + ":500"),
                        Servers.redis().hgetall(redisKey));
                break;
            default:
                throw new AssertionError(algorithm);
        }
        assertTrue(Servers.redis().pttl(redisKey) > 0, "the key has a TTL");
    }
}
