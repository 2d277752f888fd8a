package dev.sluice.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Acquisition;
import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.JointDecision;
import dev.sluice.RateLimiter;
import dev.sluice.testkit.ManualClock;
import dev.sluice.testkit.server.RedisServers;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Joint requests ({@link RateLimiter#tryAcquireAll}) on Redis and Redis Cluster: all or nothing, answered as the
 * in-memory store answers them, exact under contention, one round trip when the keys can share one script.
 */
class RedisJointTest {

    private static final Instant NOON = Instant.parse("2026-01-01T12:00:00Z");
    private static final int THREADS = 8;
    private static final int ATTEMPTS_PER_SECOND = 4; // per thread: 32 attempts a second for 10 permits

    @RegisterExtension
    static final ContendedRedis shared = new ContendedRedis(THREADS);

    /** Each algorithm refusing beside a token bucket, and a token bucket refusing beside each algorithm. */
    static Stream<Arguments> refusals() {
        List<Arguments> cases = new ArrayList<>();
        for (boolean countRejected : new boolean[] {false, true}) {
            for (Algorithm a : Algorithm.values()) {
                cases.add(Arguments.of(a, Algorithm.TOKEN_BUCKET, countRejected));
                if (a != Algorithm.TOKEN_BUCKET) {
                    cases.add(Arguments.of(Algorithm.TOKEN_BUCKET, a, countRejected));
                }
            }
        }
        return cases.stream();
    }

    /**
     * The refusing limit is spent; the joint request is refused and the other limit keeps every permit, as peeks
     * show. Every answer, and every peek after it, is the in-memory store's for the same requests at the same times.
     */
    @ParameterizedTest(name = "{0} refusing beside {1}, countRejected {2}")
    @MethodSource("refusals")
    void aRefusedJointRequestTakesNothingFromTheOtherLimit(Algorithm refusing, Algorithm other, boolean countRejected) {
        ManualClock clock = new ManualClock(NOON.plusSeconds(5));
        String key = "refused:" + UUID.randomUUID();
        // different windows, so that the two limits never share a Redis key even for the same algorithm
        RateLimiter[] redis = {
            RateLimiter.builder(refusing)
                    .limit(3, Duration.ofMinutes(1))
                    .countRejected(countRejected)
                    .clock(clock)
                    .store(shared.standalone())
                    .build(),
            RateLimiter.builder(other)
                    .limit(10, Duration.ofMinutes(2))
                    .clock(clock)
                    .store(shared.standalone())
                    .build()
        };
        RateLimiter[] memory = {
            RateLimiter.builder(refusing)
                    .limit(3, Duration.ofMinutes(1))
                    .countRejected(countRejected)
                    .clock(clock)
                    .build(),
            RateLimiter.builder(other)
                    .limit(10, Duration.ofMinutes(2))
                    .clock(clock)
                    .build()
        };

        for (int i = 0; i < 3; i++) {
            assertEquals(
                    micros(memory[0].tryAcquire(key)), redis[0].tryAcquire(key), "spending the refusing limit, " + i);
        }
        clock.advance(Duration.ofSeconds(1));
        JointDecision expected =
                RateLimiter.tryAcquireAll(Acquisition.of(memory[1], key), Acquisition.of(memory[0], key));
        JointDecision actual = RateLimiter.tryAcquireAll(Acquisition.of(redis[1], key), Acquisition.of(redis[0], key));
        assertFalse(expected.allowed(), "the in-memory reference refuses: " + expected);
        assertEquals(micros(expected), actual, "the joint answer");
        assertTrue(actual.decision(0).allowed(), "the other part had room: " + actual);

        assertEquals(10, redis[1].peek(key, 10).remaining(), "the other limit's permits after the refusal");
        assertEquals(micros(memory[1].peek(key, 10)), redis[1].peek(key, 10), "peek of the other limit");
        assertEquals(micros(memory[0].peek(key, 1)), redis[0].peek(key, 1), "peek of the refusing limit");

        clock.advance(Duration.ofSeconds(20));
        assertEquals(micros(memory[0].peek(key, 1)), redis[0].peek(key, 1), "peek of the refusing limit 20 s later");
        assertEquals(micros(memory[1].peek(key, 1)), redis[1].peek(key, 1), "peek of the other limit 20 s later");
    }

    /** A joint request that passes takes from every limit, each answering as it would alone. */
    @ParameterizedTest(name = "{0} beside a token bucket")
    @MethodSource("algorithms")
    void anAllowedJointRequestTakesFromEveryLimit(Algorithm algorithm) {
        ManualClock clock = new ManualClock(NOON.plusSeconds(5));
        String key = "allowed:" + UUID.randomUUID();
        RateLimiter r0 = RateLimiter.builder(algorithm)
                .limit(5, Duration.ofMinutes(1))
                .clock(clock)
                .store(shared.standalone())
                .build();
        RateLimiter r1 = RateLimiter.builder(Algorithm.TOKEN_BUCKET)
                .limit(7, Duration.ofSeconds(10))
                .clock(clock)
                .store(shared.standalone())
                .build();
        RateLimiter m0 = RateLimiter.builder(algorithm)
                .limit(5, Duration.ofMinutes(1))
                .clock(clock)
                .build();
        RateLimiter m1 = RateLimiter.builder(Algorithm.TOKEN_BUCKET)
                .limit(7, Duration.ofSeconds(10))
                .clock(clock)
                .build();
        for (int i = 0; i < 7; i++) {
            JointDecision expected = RateLimiter.tryAcquireAll(Acquisition.of(m0, key, 1), Acquisition.of(m1, key, 1));
            JointDecision actual = RateLimiter.tryAcquireAll(Acquisition.of(r0, key, 1), Acquisition.of(r1, key, 1));
            assertEquals(micros(expected), actual, "joint request " + i);
            clock.advance(Duration.ofMillis(700));
        }
        assertEquals(micros(m0.peek(key, 1)), r0.peek(key, 1), "peek of " + algorithm);
        assertEquals(micros(m1.peek(key, 1)), r1.peek(key, 1), "peek of the token bucket");
    }

    /**
     * {@code d} at Redis's resolution: Redis floors request times to the microsecond (whole seconds here) and rounds
     * every duration it reports up to it.
     */
    static Decision micros(Decision d) {
        long reset = ceilMicros(d.resetAfterNanos());
        Decision m = d.allowed()
                ? Decision.allowed(d.limit(), d.remaining(), reset)
                : Decision.denied(d.limit(), d.remaining(), reset, ceilMicros(d.retryAfterNanos()));
        return d.failed() ? Decision.fromFailurePolicy(m) : m;
    }

    static JointDecision micros(JointDecision j) {
        return JointDecision.of(
                j.decisions().stream().map(RedisJointTest::micros).collect(Collectors.toList()));
    }

    private static long ceilMicros(long nanos) {
        return Math.floorDiv(nanos + 999, 1000) * 1000;
    }

    static Stream<Algorithm> algorithms() {
        return Stream.of(Algorithm.values());
    }

    /**
     * Two limiters with the same algorithm and window share one Redis key for one user key. The joint script, which
     * checks every part before consuming, would let both pass on the last permit; such requests are taken in order
     * and given back instead, so the shared count never passes the limit.
     */
    @Test
    void partsSharingOneRedisKeyNeverPassTheLimitTogether() {
        ManualClock clock = new ManualClock(NOON.plusSeconds(5));
        String key = "shared:" + UUID.randomUUID();
        RateLimiter a = RateLimiter.builder(Algorithm.FIXED_WINDOW)
                .limit(5, Duration.ofMinutes(1))
                .clock(clock)
                .store(shared.standalone())
                .build();
        RateLimiter b = RateLimiter.builder(Algorithm.FIXED_WINDOW)
                .limit(5, Duration.ofMinutes(1))
                .clock(clock)
                .store(shared.standalone())
                .build();
        assertEquals(
                shared.standalone().redisKey(key, a.config()),
                shared.standalone().redisKey(key, b.config()),
                "one Redis key");
        assertTrue(
                RateLimiter.tryAcquireAll(Acquisition.of(a, key), Acquisition.of(b, key))
                        .allowed(),
                "2 of 5");
        assertTrue(
                RateLimiter.tryAcquireAll(Acquisition.of(a, key), Acquisition.of(b, key))
                        .allowed(),
                "4 of 5");
        JointDecision third = RateLimiter.tryAcquireAll(Acquisition.of(a, key), Acquisition.of(b, key));
        assertFalse(third.allowed(), "a request for the 5th and a 6th permit: " + third);
        assertEquals(1, a.peek(key, 1).remaining(), "the 5th permit, given back");
    }

    /** 8 threads, 10/s and 100/min on one key, standalone: exactly 10 a second for 10 s, then none that minute. */
    @Test
    void eightThreadsAdmitExactlyWhatBothLimitsAllow() throws Exception {
        String key = "minute:" + UUID.randomUUID();
        runMinute(shared.standalone(), key, key);
    }

    /** The same on a cluster, both limits on one user key (the hash tag): one slot, one script per request. */
    @Test
    void eightThreadsOnOneClusterSlot() throws Exception {
        String key = "minute:" + UUID.randomUUID();
        runMinute(shared.cluster(), key, key);
    }

    /** The same on a cluster with the limits on keys in different slots: taken and given back, still exact. */
    @Test
    void eightThreadsAcrossClusterSlots() throws Exception {
        String perSecond = "second:" + UUID.randomUUID();
        String perMinute = "minute:" + UUID.randomUUID();
        while (SlotHash.getSlot(perSecond) == SlotHash.getSlot(perMinute)) {
            perMinute = "minute:" + UUID.randomUUID();
        }
        runMinute(shared.cluster(), perSecond, perMinute);
    }

    private static void runMinute(RedisStore store, String secondKey, String minuteKey) throws Exception {
        ManualClock clock = new ManualClock(NOON);
        RateLimiter perSecond = RateLimiter.builder(Algorithm.TOKEN_BUCKET)
                .limit(10, Duration.ofSeconds(1))
                .clock(clock)
                .store(store)
                .build();
        RateLimiter perMinute = RateLimiter.builder(Algorithm.FIXED_WINDOW)
                .limit(100, Duration.ofMinutes(1))
                .clock(clock)
                .store(store)
                .build();
        List<Acquisition> request = List.of(Acquisition.of(perSecond, secondKey), Acquisition.of(perMinute, minuteKey));
        int total = 0;
        for (int second = 0; second < 60; second++) {
            int admitted = burst(request);
            assertEquals(second < 10 ? 10 : 0, admitted, "admitted in second " + second + " of the minute");
            total += admitted;
            clock.advance(Duration.ofSeconds(1));
        }
        assertEquals(100, total, "admitted in the minute");
        clock.set(NOON.plusSeconds(59));
        assertEquals(10, perSecond.peek(secondKey, 10).remaining(), "the refused requests took no token");
        assertEquals(0, perMinute.peek(minuteKey, 1).remaining(), "the minute's permits");
    }

    /** {@value #THREADS} threads each try {@value #ATTEMPTS_PER_SECOND} times at once; how many passed. */
    private static int burst(List<Acquisition> request) throws Exception {
        return shared.passes(
                ATTEMPTS_PER_SECOND, () -> RateLimiter.tryAcquireAll(request).allowed());
    }

    /** On a standalone server a joint request is one network write, one EVALSHA, however many parts. */
    @Test
    void aJointRequestIsOneRoundTrip() {
        NetworkWrites writes = new NetworkWrites();
        RedisClient client =
                RedisClient.create(writes.resources(), RedisServers.shared().uri());
        client.setOptions(RedisStore.recommendedClientOptions());
        try (RedisStore store = RedisContractTest.contractStore(RedisStore.builder(client))) {
            ManualClock clock = new ManualClock(NOON);
            List<Acquisition> request = new ArrayList<>();
            String key = "trip:" + UUID.randomUUID();
            for (Algorithm a : Algorithm.values()) {
                request.add(Acquisition.of(
                        RateLimiter.builder(a)
                                .limit(10, Duration.ofMinutes(1))
                                .clock(clock)
                                .store(store)
                                .build(),
                        key));
            }
            assertTrue(RateLimiter.tryAcquireAll(request).allowed(), "the first request (which may load the script)");
            long before = writes.count();
            long evalshaBefore = calls("evalsha");
            assertTrue(RateLimiter.tryAcquireAll(request).allowed(), "the second request");
            assertEquals(1, writes.count() - before, "network writes of a joint request of " + request.size());
            assertEquals(1, calls("evalsha") - evalshaBefore, "EVALSHA commands run");
        } finally {
            client.shutdown();
            writes.resources().shutdown();
        }
    }

    /** On a cluster: one network write for keys of one slot, one per part taken for keys in different slots. */
    @Test
    void onAClusterOneSlotIsOneRoundTripAndOthersAreOnePerPart() {
        NetworkWrites writes = new NetworkWrites();
        List<RedisURI> seeds = RedisServers.sharedCluster().uris().stream()
                .map(RedisURI::create)
                .collect(Collectors.toList());
        RedisClusterClient client = RedisClusterClient.create(writes.resources(), seeds);
        client.setOptions(RedisStore.recommendedClusterClientOptions());
        try (RedisStore store = RedisContractTest.contractStore(RedisStore.builder(client))) {
            ManualClock clock = new ManualClock(NOON);
            RateLimiter a = RateLimiter.builder(Algorithm.TOKEN_BUCKET)
                    .limit(10, Duration.ofSeconds(1))
                    .clock(clock)
                    .store(store)
                    .build();
            RateLimiter b = RateLimiter.builder(Algorithm.SLIDING_LOG)
                    .limit(100, Duration.ofMinutes(1))
                    .clock(clock)
                    .store(store)
                    .build();
            String key = "slot:" + UUID.randomUUID();
            String other = "slot:" + UUID.randomUUID();
            while (SlotHash.getSlot(key) == SlotHash.getSlot(other)) {
                other = "slot:" + UUID.randomUUID();
            }
            warmUp(a, b, key, other);

            long before = writes.count();
            assertTrue(RateLimiter.tryAcquireAll(Acquisition.of(a, key), Acquisition.of(b, key))
                    .allowed());
            assertEquals(1, writes.count() - before, "network writes for two parts in one slot");

            before = writes.count();
            assertTrue(RateLimiter.tryAcquireAll(Acquisition.of(a, key), Acquisition.of(b, other))
                    .allowed());
            assertEquals(2, writes.count() - before, "network writes for two parts in two slots");
        } finally {
            client.shutdown();
            writes.resources().shutdown();
        }
    }

    /** Loads every script on every node the keys live on, so that later requests cost no NOSCRIPT reload. */
    private static void warmUp(RateLimiter a, RateLimiter b, String key, String other) {
        for (String k : List.of(key, other)) {
            a.peek(k, 1);
            b.peek(k, 1);
            RateLimiter.tryAcquireAll(Acquisition.of(a, k), Acquisition.of(b, k));
        }
    }

    /** Calls of {@code command} on the shared standalone server so far. */
    static long calls(String command) {
        return RedisServers.shared().calls(command);
    }
}
