package dev.sluice.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.FailurePolicy;
import dev.sluice.RateLimitListener;
import dev.sluice.RateLimiter;
import dev.sluice.TimeSource;
import dev.sluice.redis.RedisStore;
import dev.sluice.testkit.ManualClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * Exact mode's over-limit cache on a real Redis, through the policy limiter: a key over its limit costs Redis one call,
 * then none until the retry instant, whatever the threads; a reload that changes the rule asks Redis again. Timed by
 * a hand-moved clock ({@link TimeSource#CLOCK}); the store's calls counted by its listener.
 */
class RedisOverLimitCacheTest {

    private static final ExecutorService DEADLINE = Executors.newFixedThreadPool(2);
    private static final AtomicInteger CALLS = new AtomicInteger();
    private static final RedisStore STORE = RedisStore.builder(Servers.redis())
            .timeSource(TimeSource.CLOCK)
            .failurePolicy(FailurePolicy.THROW)
            .timeout(Servers.PATIENCE)
            .expiryMargin(Duration.ofMinutes(1))
            .overLimitCache(1000)
            .listener(new RateLimitListener() {
                @Override
                public void onStoreCall(@Nullable RateLimiter limiter, long nanos) {
                    CALLS.incrementAndGet();
                }
            })
            .build();

    /** Ten seconds into a minute, whatever the time of day: a minute's window has 50 s left. */
    private final ManualClock clock =
            new ManualClock(Instant.now().truncatedTo(ChronoUnit.MINUTES).plusSeconds(10));

    private final String domain = "olc-" + UUID.randomUUID();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    @AfterAll
    static void stop() {
        DEADLINE.shutdownNow();
    }

    private Policies policies(int perMinute) {
        return Policies.parse(
                "olc.yaml",
                """
                domain: %s
                descriptors:
                  - {key: client_id, rate_limit: {unit: minute, requests_per_unit: %d}}
                """
                        .formatted(domain, perMinute));
    }

    @Test
    void sixtyFourThreadsOnAKeyOverItsLimitMakeNoStoreCallUntilTheRetryInstant() throws Exception {
        try (PolicyLimiter limiter = PolicyLimiter.builder(policies(5))
                .store(STORE)
                .clock(clock)
                .meterRegistry(registry)
                .deadline(Servers.PATIENCE, DEADLINE) // as the service checks: the store call bounded by a deadline
                .build()) {
            Descriptor hot = Descriptor.of("client_id", "hot");
            int before = CALLS.get();
            for (int i = 0; i < 5; i++) {
                assertTrue(limiter.check(domain, hot).allowed());
            }
            Verdict refused = limiter.check(domain, hot);
            assertFalse(refused.allowed());
            assertEquals(Duration.ofSeconds(50), refused.retryAfter());
            assertEquals(6, CALLS.get() - before);

            int threads = 64;
            int each = 50;
            CountDownLatch start = new CountDownLatch(1);
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            List<Future<Integer>> refusals = new ArrayList<>();
            try {
                for (int t = 0; t < threads; t++) {
                    refusals.add(pool.submit(() -> {
                        start.await();
                        int n = 0;
                        for (int i = 0; i < each; i++) {
                            Verdict v = limiter.check(domain, hot);
                            if (!v.allowed() && v.retryAfter().equals(Duration.ofSeconds(50))) {
                                n++;
                            }
                        }
                        return n;
                    }));
                }
                start.countDown();
                int total = 0;
                for (Future<Integer> f : refusals) {
                    total += f.get();
                }
                assertEquals(threads * each, total, "every check refused, with the store's retry-after");
            } finally {
                pool.shutdownNow();
            }
            assertEquals(6, CALLS.get() - before, "no store call after the first refusal");
            assertEquals(
                    threads * each,
                    registry.get(PolicyMetrics.OVER_LIMIT_CACHE_HITS)
                            .tag("domain", domain)
                            .counter()
                            .count());
            assertEquals(
                    threads * each + 1,
                    registry.get(PolicyMetrics.REQUESTS)
                            .tag("domain", domain)
                            .tag("outcome", "denied")
                            .counter()
                            .count(),
                    "a cached refusal is counted as a refusal");

            clock.set(clock.instant().plusSeconds(50)); // the window's end: Redis decides again, and admits
            assertTrue(limiter.check(domain, hot).allowed());
            assertEquals(7, CALLS.get() - before);
        }
    }

    @Test
    void aReloadThatChangesTheRuleAsksTheStoreAgainAndOneThatKeepsItKeepsTheRefusal() {
        try (PolicyLimiter limiter =
                PolicyLimiter.builder(policies(1)).store(STORE).clock(clock).build()) {
            Descriptor d = Descriptor.of("client_id", "c");
            int before = CALLS.get();
            assertTrue(limiter.check(domain, d).allowed());
            assertFalse(limiter.check(domain, d).allowed());
            assertFalse(limiter.check(domain, d).allowed());
            assertEquals(2, CALLS.get() - before, "the third check refused from the cache");

            limiter.update(policies(2)); // a new limit: a new limiter, whose cache is empty
            assertTrue(limiter.check(domain, d).allowed(), "Redis has the one count: the second of two passes");
            assertFalse(limiter.check(domain, d).allowed());
            assertEquals(4, CALLS.get() - before);

            limiter.update(policies(2)); // the same rule: its limiter, and the refusal it keeps, stay
            assertFalse(limiter.check(domain, d).allowed());
            assertEquals(4, CALLS.get() - before);
        }
    }
}
