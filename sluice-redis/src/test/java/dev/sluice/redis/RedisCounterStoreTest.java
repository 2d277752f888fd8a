package dev.sluice.redis;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.LimiterConfig;
import dev.sluice.RateLimiter;
import dev.sluice.SluiceException;
import dev.sluice.TimeSource;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterSnapshot;
import dev.sluice.spi.CounterWrite;
import dev.sluice.spi.SharedStoreOptions;
import dev.sluice.sync.SynchronizedStore;
import dev.sluice.testkit.ManualClock;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.sync.RedisAdvancedClusterCommands;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** What the Redis counter store writes and reads: exact numbers, any key, the expiry, and what it refuses. */
class RedisCounterStoreTest {

    private static final long MILLI = 1_000_000L;

    private final String run = UUID.randomUUID().toString().substring(0, 8);

    private static RedisCounterStore store() {
        return RedisStore.counterStoreBuilder(Servers.client())
                .timeout(Servers.PATIENCE)
                .build();
    }

    private static long inAnHour() {
        return (System.currentTimeMillis() + 3_600_000L) * MILLI;
    }

    private CounterKey id(String name) {
        return new CounterKey("test:" + run, name);
    }

    // ---- exact numbers ---------------------------------------------------------------------------------------------

    /**
     * 2^53 and 2^53 + 1 are one double: a version compared as a Lua number would let a write expecting the one
     * through at the other. Frames (nanoseconds) and counts of any {@code long} come back exactly too, and a record of
     * 5,000 frames (10,003 script arguments, more than Lua can unpack at once) is written whole.
     */
    @Test
    void versionsFramesAndCountsOfAnyLongAreExact() {
        try (RedisCounterStore store = store()) {
            CounterKey a = id("exact");
            long v1 = 1L << 53;
            long expire = inAnHour();
            Map<Long, Long> frames = Map.of(
                    Long.MAX_VALUE - 1, Long.MAX_VALUE, (1L << 53) + 1, (1L << 53) + 1, -1_500_000_000L, 1L, 0L, 2L);
            assertArrayEquals(
                    new boolean[] {true},
                    store.compareAndSet(List.of(new CounterWrite(a, CounterSnapshot.ABSENT, v1, frames, expire))));
            assertEquals(new CounterSnapshot(v1, frames), store.load(List.of(a)).get(0));

            assertArrayEquals(
                    new boolean[] {false},
                    store.compareAndSet(List.of(new CounterWrite(a, v1 + 1, 5, Map.of(1L, 1L), expire))),
                    "2^53 + 1 is not 2^53");
            assertEquals(new CounterSnapshot(v1, frames), store.load(List.of(a)).get(0));

            assertArrayEquals(
                    new boolean[] {true},
                    store.compareAndSet(List.of(new CounterWrite(a, v1, Long.MIN_VALUE, Map.of(7L, 9L), expire))));
            assertArrayEquals(
                    new boolean[] {false},
                    store.compareAndSet(List.of(new CounterWrite(a, Long.MIN_VALUE + 1, 3, Map.of(), expire))));
            assertArrayEquals(
                    new boolean[] {true},
                    store.compareAndSet(List.of(new CounterWrite(a, Long.MIN_VALUE, -1, Map.of(8L, 1L), expire))));
            assertEquals(
                    new CounterSnapshot(-1, Map.of(8L, 1L)),
                    store.load(List.of(a)).get(0));

            CounterKey many = id("many");
            Map<Long, Long> thousands = new HashMap<>();
            for (long f = 0; f < 5_000; f++) {
                thousands.put(1_767_268_800_000_000_000L + f * 1_000_000L, f + 1);
            }
            assertArrayEquals(
                    new boolean[] {true},
                    store.compareAndSet(
                            List.of(new CounterWrite(many, CounterSnapshot.ABSENT, 42, thousands, expire))));
            CounterSnapshot back = store.load(List.of(many)).get(0);
            assertEquals(new CounterSnapshot(42, thousands), back);
            assertEquals(5_000L * 5_001 / 2, back.total());
        }
    }

    // ---- keys ------------------------------------------------------------------------------------------------------

    private static final String[] ODD = {
        "a{b}c",
        "a%7Bb%7Dc",
        "{",
        "}{",
        "%",
        "é漢字🙂",
        "\u0000",
        "line\nbreak",
        "lone \uD800 surrogate",
        "x".repeat(10_000),
        "with shapes"
    };

    /**
     * Keys and shapes of any characters are records of their own, named with the exact-mode store's hash tag and
     * escaping; {@code a{b}c} and {@code a%7Bb%7Dc} are two records.
     */
    @Test
    void anyKeyAndSpaceIsARecordOfItsOwn() {
        try (RedisCounterStore store = store()) {
            List<CounterKey> ids = new ArrayList<>();
            List<CounterWrite> writes = new ArrayList<>();
            String[] shapes = {"fw:60000000000", "odd{shape}%"};
            for (String shape : shapes) {
                for (int i = 0; i < ODD.length; i++) {
                    CounterKey id = new CounterKey(shape, run + ODD[i]);
                    ids.add(id);
                    writes.add(new CounterWrite(
                            id, CounterSnapshot.ABSENT, ids.size(), Map.of(1_000L, (long) ids.size()), inAnHour()));
                }
            }
            boolean[] all = new boolean[writes.size()];
            Arrays.fill(all, true);
            assertArrayEquals(all, store.compareAndSet(writes));
            List<CounterSnapshot> read = store.load(ids);
            for (int i = 0; i < ids.size(); i++) {
                assertEquals(
                        new CounterSnapshot(i + 1, Map.of(1_000L, i + 1L)), read.get(i), "record of " + ids.get(i));
                assertEquals(1, Servers.redis().exists(store.redisKey(ids.get(i))));
            }
            assertEquals("sluice:{" + run + "a%7Bb%7Dc}:sync:fw:60000000000", store.redisKey(ids.get(0)));
            assertEquals(
                    "sluice:{" + run + "a%257Bb%257Dc}:sync:odd%7Bshape%7D%25",
                    store.redisKey(new CounterKey("odd{shape}%", run + "a%7Bb%7Dc")));
            assertEquals("hash", Servers.redis().type(store.redisKey(ids.get(0))));
        }
    }

    /** On a cluster, a record lives in the slot of its key's hash tag: the escaped key, whatever the shape. */
    @Test
    void onAClusterARecordLivesInItsKeysSlot() {
        RedisClusterClient client = Servers.clusterClient();
        RedisAdvancedClusterCommands<String, String> cluster = Servers.cluster();
        try (RedisCounterStore store = RedisStore.counterStoreBuilder(client)
                .namespace("n{s}")
                .timeout(Servers.PATIENCE)
                .build()) {
            List<CounterKey> ids = new ArrayList<>();
            List<CounterWrite> writes = new ArrayList<>();
            for (int i = 0; i < ODD.length; i++) {
                CounterKey id = new CounterKey("shape:" + i, run + ODD[i]);
                ids.add(id);
                writes.add(new CounterWrite(id, CounterSnapshot.ABSENT, 100 + i, Map.of(-5L, 1L + i), inAnHour()));
            }
            boolean[] all = new boolean[writes.size()];
            Arrays.fill(all, true);
            assertArrayEquals(all, store.compareAndSet(writes));
            List<CounterSnapshot> read = store.load(ids);
            for (int i = 0; i < ids.size(); i++) {
                String redisKey = store.redisKey(ids.get(i));
                assertTrue(redisKey.startsWith("n%7Bs%7D:{"), redisKey);
                assertEquals(
                        cluster.clusterKeyslot(RedisDecider.escape(ids.get(i).key())),
                        cluster.clusterKeyslot(redisKey),
                        "slot of " + ids.get(i));
                assertEquals(1, cluster.exists(redisKey));
                assertEquals(new CounterSnapshot(100 + i, Map.of(-5L, 1L + i)), read.get(i));
            }
        }
    }

    /** The same key and limiter shape in exact and synchronized mode: two Redis keys of their own, never one. */
    @Test
    void recordsNeverMeetTheExactModeStateOfTheSameKey() {
        LimiterConfig config = RateLimiter.builder(Algorithm.FIXED_WINDOW)
                .limit(3, Duration.ofMinutes(1))
                .config();
        String key = run + ":both";
        ManualClock clock = new ManualClock(Instant.ofEpochMilli(System.currentTimeMillis()));
        try (RedisStore exact = RedisStore.builder(Servers.client())
                        .timeSource(TimeSource.CLOCK)
                        .timeout(Servers.PATIENCE)
                        .build();
                RedisCounterStore counters = store()) {
            CounterKey id = new CounterKey(SharedStoreOptions.shape(config), key);
            assertNotEquals(exact.redisKey(key, config), counters.redisKey(id));
            RateLimiter exactLimiter = RateLimiter.builder(Algorithm.FIXED_WINDOW)
                    .limit(3, Duration.ofMinutes(1))
                    .clock(clock)
                    .store(exact)
                    .build();
            SynchronizedStore sync =
                    SynchronizedStore.builder(counters).manualRounds().build();
            RateLimiter syncLimiter = RateLimiter.builder(Algorithm.FIXED_WINDOW)
                    .limit(3, Duration.ofMinutes(1))
                    .clock(clock)
                    .store(sync)
                    .build();
            assertEquals(2, exactLimiter.tryAcquire(key).remaining());
            assertEquals(2, syncLimiter.tryAcquire(key).remaining());
            assertTrue(sync.flush());
            assertEquals(1, exactLimiter.tryAcquire(key).remaining());
            assertEquals(1, counters.load(List.of(id)).get(0).total());
            assertEquals("string", Servers.redis().type(exact.redisKey(key, config)));
            assertEquals("hash", Servers.redis().type(counters.redisKey(id)));
        }
    }

    // ---- expiry ----------------------------------------------------------------------------------------------------

    /**
     * A record expires at its write's {@code expireAt} plus the margin: its PTTL, read between two readings of the
     * real clock {@code t0 <= t1}, lies in {@code [expiry - t1, expiry - t0]}. A record whose expiry (with the margin)
     * has passed is gone at once.
     */
    @Test
    void aRecordExpiresAtItsWritesExpiryPlusTheMargin() {
        RedisCommands<String, String> redis = Servers.redis();
        long[][] cases = { // margin ms, expireAt relative to now (ms)
            {0, 3_600_000}, {1_000, 3_600_000}, {3_600_000, -60_000}, {0, 600_000}
        };
        for (long[] c : cases) {
            try (RedisCounterStore store = RedisStore.counterStoreBuilder(Servers.client())
                    .timeout(Servers.PATIENCE)
                    .expiryMargin(Duration.ofMillis(c[0]))
                    .build()) {
                CounterKey id = id("ttl:" + c[0] + ":" + c[1]);
                long expireAtNanos = (System.currentTimeMillis() + c[1]) * MILLI + 123_456;
                long expiry = expireAtNanos / MILLI + 1 + c[0];
                assertArrayEquals(
                        new boolean[] {true},
                        store.compareAndSet(List.of(
                                new CounterWrite(id, CounterSnapshot.ABSENT, 1, Map.of(1L, 1L), expireAtNanos))));
                long t0 = System.currentTimeMillis();
                long pttl = redis.pttl(store.redisKey(id));
                long t1 = System.currentTimeMillis();
                assertTrue(
                        expiry - t1 <= pttl && pttl <= expiry - t0,
                        "margin " + c[0] + " ms: PTTL " + pttl + " not in [" + (expiry - t1) + ", " + (expiry - t0)
                                + "]");
            }
        }
        try (RedisCounterStore store = RedisStore.counterStoreBuilder(Servers.client())
                .timeout(Servers.PATIENCE)
                .expiryMargin(Duration.ZERO)
                .build()) {
            CounterKey gone = id("expired");
            assertArrayEquals(
                    new boolean[] {true},
                    store.compareAndSet(List.of(new CounterWrite(
                            gone,
                            CounterSnapshot.ABSENT,
                            1,
                            Map.of(1L, 1L),
                            (System.currentTimeMillis() - 1_000) * MILLI))));
            assertEquals(CounterSnapshot.absent(), store.load(List.of(gone)).get(0));
            assertEquals(0, redis.exists(store.redisKey(gone)));
        }
    }

    @Test
    void theExpiryIsRoundedUpToTheMillisecondAndSaturates() {
        try (RedisCounterStore store = RedisStore.counterStoreBuilder(Servers.client())
                .expiryMargin(Duration.ofSeconds(2))
                .build()) {
            assertEquals(1_767_268_860_000L + 2_000, store.expiryMillis(1_767_268_860_000_000_000L));
            assertEquals(1_767_268_860_001L + 2_000, store.expiryMillis(1_767_268_860_000_000_001L));
            assertEquals(-1L + 2_000, store.expiryMillis(-1_999_999));
            assertEquals(9_223_372_036_855L + 2_000, store.expiryMillis(Long.MAX_VALUE));
        }
        try (RedisCounterStore store = RedisStore.counterStoreBuilder(Servers.client())
                .expiryMargin(Duration.ofSeconds(Long.MAX_VALUE))
                .build()) {
            assertEquals(Long.MAX_VALUE, store.expiryMillis(1_767_268_860_000_000_000L));
        }
    }

    // ---- what is not a record, and the builder ---------------------------------------------------------------------

    @Test
    void somethingElseAtARecordsKeyIsAFailureNotAnAnswer() {
        RedisCommands<String, String> redis = Servers.redis();
        try (RedisCounterStore store = store()) {
            CounterKey string = id("a string");
            redis.set(store.redisKey(string), "x");
            SluiceException read = assertThrows(SluiceException.class, () -> store.load(List.of(string)));
            assertTrue(read.getCause().getMessage().startsWith("WRONGTYPE"), read.toString());
            SluiceException written = assertThrows(
                    SluiceException.class,
                    () -> store.compareAndSet(
                            List.of(new CounterWrite(string, CounterSnapshot.ABSENT, 1, Map.of(), inAnHour()))));
            assertTrue(written.getCause().getMessage().contains("WRONGTYPE"), written.toString());
            assertEquals("x", redis.get(store.redisKey(string)));

            CounterKey garbage = id("garbage");
            redis.hset(store.redisKey(garbage), Map.of("v", "12", "abc", "3"));
            SluiceException notANumber = assertThrows(SluiceException.class, () -> store.load(List.of(garbage)));
            assertTrue(notANumber.getMessage().contains("is not a counter record"), notANumber.getMessage());

            CounterKey noVersion = id("no version");
            redis.hset(store.redisKey(noVersion), Map.of("123", "4"));
            SluiceException unversioned = assertThrows(SluiceException.class, () -> store.load(List.of(noVersion)));
            assertTrue(unversioned.getMessage().contains("no field v"), unversioned.getMessage());
        }
    }

    @Test
    void theBuilderRefusesBadValuesNamingThem() {
        RedisClient client = Servers.client();
        assertEquals(
                "client must not be null",
                assertThrows(NullPointerException.class, () -> RedisStore.counterStoreBuilder((RedisClient) null))
                        .getMessage());
        assertEquals(
                "client must not be null",
                assertThrows(
                                NullPointerException.class,
                                () -> RedisStore.counterStoreBuilder((RedisClusterClient) null))
                        .getMessage());
        RedisStore.CounterStoreBuilder b = RedisStore.counterStoreBuilder(client);
        assertEquals(
                "timeout must be > 0, was 0s",
                assertThrows(IllegalArgumentException.class, () -> b.timeout(Duration.ZERO))
                        .getMessage());
        assertEquals(
                "timeout must be > 0, was -1ms",
                assertThrows(IllegalArgumentException.class, () -> b.timeout(Duration.ofMillis(-1)))
                        .getMessage());
        assertEquals(
                "expiryMargin must be >= 0, was -1s",
                assertThrows(IllegalArgumentException.class, () -> b.expiryMargin(Duration.ofSeconds(-1)))
                        .getMessage());
        assertEquals(
                "namespace must not be empty, was ''",
                assertThrows(IllegalArgumentException.class, () -> b.namespace(""))
                        .getMessage());
        assertThrows(NullPointerException.class, () -> b.namespace(null));
    }

    @Test
    void aClosedStoreThrowsIllegalState() {
        RedisCounterStore store = store();
        assertEquals(CounterSnapshot.absent(), store.load(List.of(id("closed"))).get(0));
        store.close();
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> store.load(List.of(id("closed"))));
        assertEquals("the Redis store is closed", e.getMessage());
        assertFalse(store.toString().isEmpty());
    }
}
