package dev.sluice.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.FailurePolicy;
import dev.sluice.RateLimiter;
import dev.sluice.RateLimiterBuilder;
import dev.sluice.Reservation;
import dev.sluice.TimeSource;
import dev.sluice.testkit.ManualClock;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.cluster.api.sync.RedisAdvancedClusterCommands;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/** What the store writes: key names, for any user key; a TTL on every key; no key for a fresh state. */
class RedisKeysTest {

    private static final Instant AT = Instant.parse("2026-01-01T12:00:05Z");

    private static RedisStore store(String namespace, TimeSource timeSource, Duration margin) {
        return RedisStore.builder(Servers.client())
                .namespace(namespace)
                .timeSource(timeSource)
                .failurePolicy(FailurePolicy.THROW)
                .timeout(Servers.PATIENCE)
                .expiryMargin(margin)
                .build();
    }

    private static RateLimiter limiter(
            RedisStore store, Algorithm algorithm, ManualClock clock, UnaryOperator<RateLimiterBuilder> options) {
        return options.apply(RateLimiter.builder(algorithm)
                        .limit(3, Duration.ofSeconds(60))
                        .clock(clock))
                .store(store)
                .build();
    }

    @Test
    void everyKeyTheStoreWritesHasATtl() {
        String namespace = "ttl-" + UUID.randomUUID();
        Random random = new Random(11);
        for (TimeSource timeSource : TimeSource.values()) {
            try (RedisStore store = store(namespace, timeSource, Duration.ofSeconds(1))) {
                ManualClock clock = new ManualClock(AT);
                for (Algorithm algorithm : Algorithm.values()) {
                    for (boolean counted : new boolean[] {false, true}) {
                        RateLimiter limiter = limiter(store, algorithm, clock, b -> {
                            b.countRejected(counted);
                            return algorithm == Algorithm.SLIDING_WINDOW_COUNTER ? b.buckets(4) : b;
                        });
                        List<Reservation> held = new ArrayList<>();
                        for (int i = 0; i < 40; i++) {
                            clock.advance(Duration.ofMillis(random.nextInt(8_000)));
                            String key = timeSource + ":" + algorithm + ":" + counted + ":" + random.nextInt(4);
                            switch (random.nextInt(4)) {
                                case 0:
                                    held.add(limiter.reserve(key, 1 + random.nextInt(3)));
                                    break;
                                case 1:
                                    if (!held.isEmpty()) {
                                        held.remove(random.nextInt(held.size())).cancel();
                                    }
                                    break;
                                default:
                                    limiter.tryAcquire(key, 1 + random.nextInt(3));
                            }
                        }
                    }
                }
            }
        }
        List<String> keys = new ArrayList<>();
        ScanCursor cursor = ScanCursor.INITIAL;
        do {
            KeyScanCursor<String> page = Servers.redis()
                    .scan(cursor, ScanArgs.Builder.matches(namespace + ":*").limit(1000));
            keys.addAll(page.getKeys());
            cursor = page;
        } while (!cursor.isFinished());
        assertTrue(keys.size() > 40, "keys written: " + keys.size());
        for (String key : keys) {
            long ttl = Servers.redis().pttl(key);
            assertTrue(ttl > 0, key + " has TTL " + ttl);
        }
    }

    /**
     * 3 per 60 s, one request at 12:00:05, expiry margin 30 s: the TTL is the time until the state is equivalent to
     * a fresh one, plus the margin.
     */
    static Stream<Arguments> ttls() {
        return Stream.of(
                Arguments.of(Algorithm.FIXED_WINDOW, false, 55 + 30), // the window ends at 12:01:00
                Arguments.of(Algorithm.SLIDING_LOG, false, 60 + 30), // the entry leaves at 12:01:05
                Arguments.of(Algorithm.SLIDING_WINDOW_COUNTER, false, 55 + 30), // [12:00:00, +15 s) stops counting
                Arguments.of(Algorithm.SLIDING_WINDOW_COUNTER, true, 70 + 30), // strict: when its end is 60 s old
                Arguments.of(Algorithm.SLIDING_TAIL, false, 115 + 30), // its window is the previous until 12:02:00
                Arguments.of(Algorithm.TOKEN_BUCKET, false, 20 + 30), // one token back in 20 s
                Arguments.of(Algorithm.LEAKY_BUCKET, false, 20 + 30)); // one permit leaks in 20 s
    }

    @ParameterizedTest(name = "{0}, strict={1}")
    @MethodSource("ttls")
    void theTtlIsTheTimeUntilTheStateIsFreshPlusTheMargin(Algorithm algorithm, boolean strict, long seconds) {
        try (RedisStore store = store("sluice", TimeSource.CLOCK, Duration.ofSeconds(30))) {
            RateLimiter limiter = limiter(
                    store,
                    algorithm,
                    new ManualClock(AT),
                    b -> algorithm == Algorithm.SLIDING_WINDOW_COUNTER
                            ? b.buckets(4).strict(strict)
                            : b);
            String key = "ttl:" + UUID.randomUUID();
            assertTrue(limiter.tryAcquire(key).allowed());
            long ttl = Servers.redis().pttl(store.redisKey(key, limiter.config()));
            // PTTL counts down in real time from the moment of the write: allow it 10 s to be read
            assertTrue(
                    ttl <= seconds * 1000 && ttl > seconds * 1000 - 10_000,
                    "TTL " + ttl + " ms, expected " + seconds + " s");
        }
    }

    @Test
    void withTheStoreClockTheMarginDoesNotApply() {
        try (RedisStore store = store("sluice", TimeSource.STORE, Duration.ofMinutes(10))) {
            RateLimiter limiter = limiter(store, Algorithm.TOKEN_BUCKET, new ManualClock(AT), b -> b);
            String key = "ttl:" + UUID.randomUUID();
            assertTrue(limiter.tryAcquire(key).allowed());
            long ttl = Servers.redis().pttl(store.redisKey(key, limiter.config()));
            assertTrue(ttl <= 20_000 && ttl > 10_000, "TTL " + ttl + " ms, expected 20 s");
        }
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void aStateBackToFreshHasNoKey(Algorithm algorithm) {
        try (RedisStore store = store("sluice", TimeSource.CLOCK, Duration.ofSeconds(1))) {
            RateLimiter limiter = limiter(store, algorithm, new ManualClock(AT), b -> b);
            String key = "fresh:" + UUID.randomUUID();
            String redisKey = store.redisKey(key, limiter.config());
            Reservation r = limiter.reserve(key, 2);
            assertEquals(1, Servers.redis().exists(redisKey), "the reservation is stored");
            assertTrue(r.cancel());
            assertEquals(0, Servers.redis().exists(redisKey), "given back in full: no state left");
            assertTrue(limiter.peek(key, 1).allowed());
            assertEquals(0, Servers.redis().exists(redisKey), "a peek writes nothing");
        }
    }

    /** User keys that a naive key scheme would break or merge. */
    static List<String> oddKeys() {
        return List.of(
                "plain",
                "ü-ключ-鍵-🙂",
                "{",
                "}",
                "{}",
                "}{",
                "a{b}c",
                "a%7Bb%7Dc",
                "%",
                "%25",
                "%7B",
                "x".repeat(10_240),
                "{" + "y".repeat(10_000) + "}",
                "nul\u0000byte",
                "\uD800",
                "\uDBFF",
                "%uD800",
                "line\nbreak",
                "sluice:{plain}:fw:60000000000");
    }

    @Test
    void oddKeysAreSafeAndDistinctOnRedis() {
        try (RedisStore store = store("sluice", TimeSource.CLOCK, Duration.ofSeconds(1))) {
            assertOddKeysWork(store);
        }
    }

    @Test
    void oddKeysAreSafeAndDistinctOnRedisClusterAndShareTheirKeysSlot() {
        RedisAdvancedClusterCommands<String, String> cluster = Servers.cluster();
        try (RedisStore store = RedisStore.builder(Servers.clusterClient())
                .timeSource(TimeSource.CLOCK)
                .failurePolicy(FailurePolicy.THROW)
                .timeout(Servers.PATIENCE)
                .build()) {
            RateLimiter limiter = assertOddKeysWork(store);
            for (String key : oddKeys()) {
                String redisKey = store.redisKey(key, limiter.config());
                assertEquals(
                        cluster.clusterKeyslot(RedisDecider.escape(key)),
                        cluster.clusterKeyslot(redisKey),
                        "the slot of " + redisKey + " is its user key's");
            }
        }
    }

    /** Limit 1 on every key: each key's first request passes (no two share a state), its second does not. */
    private static RateLimiter assertOddKeysWork(RedisStore store) {
        String run = UUID.randomUUID() + ":";
        RateLimiter limiter =
                limiter(store, Algorithm.FIXED_WINDOW, new ManualClock(AT), b -> b.limit(1, Duration.ofMinutes(1)));
        for (String key : oddKeys()) {
            assertTrue(limiter.tryAcquire(run + key).allowed(), "first on " + key);
        }
        for (String key : oddKeys()) {
            assertFalse(limiter.tryAcquire(run + key).allowed(), "second on " + key);
        }
        return limiter;
    }

    @Test
    void keysAreNamespaceUserKeyAsHashTagAndStateName() {
        try (RedisStore store = store("app{1}%", TimeSource.CLOCK, Duration.ofSeconds(1))) {
            RateLimiter tb = limiter(store, Algorithm.TOKEN_BUCKET, new ManualClock(AT), b -> b);
            RateLimiter swc = limiter(store, Algorithm.SLIDING_WINDOW_COUNTER, new ManualClock(AT), b -> b.buckets(4)
                    .strict(true));
            Map<String, String> expected = Map.of(
                    "client:abc", "app%7B1%7D%25:{client:abc}:tb:60000000000",
                    "a{b}c", "app%7B1%7D%25:{a%7Bb%7Dc}:tb:60000000000",
                    "\uD800", "app%7B1%7D%25:{%uD800}:tb:60000000000");
            expected.forEach((key, redisKey) -> assertEquals(redisKey, store.redisKey(key, tb.config())));
            assertEquals("app%7B1%7D%25:{k}:swc:60000000000:4s", store.redisKey("k", swc.config()));
        }
    }
}
