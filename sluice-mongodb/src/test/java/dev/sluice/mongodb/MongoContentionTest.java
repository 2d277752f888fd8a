package dev.sluice.mongodb;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.mongodb.client.MongoClient;
import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.LimiterConfig;
import dev.sluice.RateLimiter;
import dev.sluice.spi.SharedStoreOptions;
import dev.sluice.testkit.ManualClock;
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
import org.bson.Document;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Four limiter instances, each with a client (connection pool) of its own as four service instances would have,
 * sixteen threads each, all on one key: exactly the limit is admitted, and the stored state says so.
 */
class MongoContentionTest {

    private static final int INSTANCES = 4;
    private static final int THREADS = 16;
    private static final int REQUESTS_PER_THREAD = 12;
    private static final long LIMIT = 300;

    @ParameterizedTest
    @EnumSource(
            value = Algorithm.class,
            names = {"FIXED_WINDOW", "TOKEN_BUCKET", "SLIDING_LOG"})
    void exactlyTheLimitIsAdmittedAcrossInstances(Algorithm algorithm) throws Exception {
        ManualClock clock = new ManualClock(Instant.parse("2026-01-01T12:00:00Z"));
        String key = "contention:" + UUID.randomUUID();
        List<MongoClient> clients = new ArrayList<>();
        List<RateLimiter> limiters = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(INSTANCES * THREADS);
        try {
            for (int i = 0; i < INSTANCES; i++) {
                MongoClient client = Mongo.client();
                clients.add(client);
                limiters.add(RateLimiter.builder(algorithm)
                        .limit(LIMIT, Duration.ofMinutes(1))
                        .clock(clock)
                        .store(Mongo.clockStore(client).build())
                        .build());
            }
            CountDownLatch start = new CountDownLatch(1);
            List<Future<Integer>> admitted = new ArrayList<>();
            for (RateLimiter limiter : limiters) {
                for (int t = 0; t < THREADS; t++) {
                    admitted.add(pool.submit(() -> {
                        start.await();
                        int n = 0;
                        for (int r = 0; r < REQUESTS_PER_THREAD; r++) {
                            Decision d = limiter.tryAcquire(key);
                            if (d.allowed()) {
                                n++;
                            }
                        }
                        return n;
                    }));
                }
            }
            start.countDown();
            int total = 0;
            for (Future<Integer> f : admitted) {
                total += f.get(120, TimeUnit.SECONDS);
            }
            assertEquals(LIMIT, total, algorithm + ": admitted across " + INSTANCES + " instances");

            LimiterConfig config = limiters.get(0).config();
            Document doc = clients.get(0)
                    .getDatabase(Mongo.DATABASE)
                    .getCollection(MongoStore.DEFAULT_COLLECTION)
                    .find(new Document("_id", MongoKeys.id("sluice", SharedStoreOptions.shape(config), key)))
                    .first();
            History history = History.of(doc);
            assertEquals(
                    INSTANCES * THREADS * REQUESTS_PER_THREAD,
                    history.seq + history.ops.size(),
                    "every request is in the key's history, folded or not");
            long[] state = history.ops.isEmpty()
                    ? history.base()
                    : history.replay(History.id(history.ops.get(history.ops.size() - 1)), new Own(config))
                            .state()
                            .snapshot();
            long noon = clock.instant().getEpochSecond() * 1_000_000_000L;
            switch (algorithm) {
                case FIXED_WINDOW: // [window index, count]
                    assertArrayEquals(new long[] {noon / 60_000_000_000L, LIMIT}, state, "stored fixed window");
                    break;
                case TOKEN_BUCKET: // [tokens, fraction, last refill, last seen full]
                    assertArrayEquals(new long[] {0, 0, noon, noon}, state, "stored token bucket");
                    break;
                default: // [total, expiry, weight]: all at one instant, so one entry
                    assertArrayEquals(new long[] {LIMIT, noon + 60_000_000_000L, LIMIT}, state, "stored log");
            }
        } finally {
            pool.shutdownNow();
            clients.forEach(MongoClient::close);
        }
    }

    /** Every request was made with the one configuration. */
    private record Own(LimiterConfig config) implements History.Configs {
        @Override
        public LimiterConfig own() {
            return config;
        }

        @Override
        public LimiterConfig of(long limit, boolean countRejected) {
            assertEquals(config.limit(), limit, "the limit a request carries");
            return config;
        }
    }
}
