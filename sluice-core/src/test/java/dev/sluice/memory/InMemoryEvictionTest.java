package dev.sluice.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.LimiterConfig;
import dev.sluice.Reservation;
import dev.sluice.TestClock;
import dev.sluice.Variants;
import dev.sluice.algorithm.AlgorithmState;
import dev.sluice.algorithm.Params;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Idle keys are evicted, and eviction never changes an answer. */
class InMemoryEvictionTest {

    private final TestClock clock = new TestClock();

    private InMemoryRateLimiter limiter(LimiterConfig config) {
        return (InMemoryRateLimiter)
                InMemoryStore.builder().keepIdleKeys(Duration.ZERO).build().bind(config); // evicts as soon as idle
    }

    /**
     * Random traffic on ten keys, every idle key evicted after every request, against states kept forever in a
     * plain map: every decision and every cancel must be the same.
     */
    @ParameterizedTest(name = "{0} countRejected={1} strict={2}")
    @MethodSource("dev.sluice.Variants#all")
    void evictionNeverChangesADecision(Algorithm algorithm, boolean countRejected, boolean strict) {
        LimiterConfig config = new LimiterConfig(algorithm, 3, Duration.ofSeconds(1), clock, countRejected, 4, strict);
        InMemoryRateLimiter limiter = limiter(config);
        Params p = new Params(config);
        Map<String, AlgorithmState> kept = new HashMap<>();
        List<Object[]> reservations = new ArrayList<>(); // {Reservation, cost, kept state, place}
        Random random = new Random(Variants.seed(algorithm, countRejected, strict));
        long[] steps = {0, 1, 7, 50, 100, 333, 1_000, 2_500};
        int evicted = 0;
        for (int i = 0; i < 2_000; i++) {
            clock.advance(Duration.ofMillis(steps[random.nextInt(steps.length)]));
            long now = clock.nanos();
            String key = "k" + random.nextInt(10);
            long cost = 1 + random.nextInt(3);
            AlgorithmState state = kept.computeIfAbsent(key, k -> AlgorithmState.create(algorithm, p));
            String at = "request " + i + " on " + key + " cost " + cost;
            int op = random.nextInt(10);
            if (op < 5) {
                assertEquals(state.decide(p, now, cost, true), limiter.tryAcquire(key, cost), at);
            } else if (op < 6) {
                assertEquals(state.decide(p, now, cost, false), limiter.peek(key, cost), at + " peek");
            } else if (op < 8 || reservations.isEmpty()) {
                Decision expected = state.decide(p, now, cost, true);
                Reservation r = limiter.reserve(key, cost);
                assertEquals(expected, r.decision(), at + " reserve");
                reservations.add(new Object[] {r, cost, state, expected.allowed() ? state.place(p, now) : 0L});
            } else {
                Object[] r = reservations.remove(random.nextInt(reservations.size()));
                Reservation reservation = (Reservation) r[0];
                boolean expected = reservation.decision().allowed()
                        && ((AlgorithmState) r[2]).giveBack(p, now, (Long) r[1], (Long) r[3]);
                assertEquals(expected, reservation.cancel(), at + " cancel of " + reservation);
            }
            evicted += limiter.evictIdle();
        }
        assertTrue(evicted > 100, "evictions: " + evicted);
    }

    @Test
    void memoryFollowsTheActiveKeys() {
        InMemoryRateLimiter limiter =
                limiter(new LimiterConfig(Algorithm.FIXED_WINDOW, 1, Duration.ofSeconds(1), clock, false, 60, false));
        for (int i = 0; i < 10_000; i++) {
            limiter.tryAcquire("old" + i);
        }
        assertEquals(10_000, limiter.keyCount());
        clock.advance(Duration.ofSeconds(1)); // every key is idle now: its window is over
        for (int i = 0; i < 100; i++) {
            limiter.tryAcquire("new" + i);
        }
        for (int i = 0; i < 60; i++) { // 60 ms of traffic on one key: 60 sweeps of 256 entries, nothing else
            clock.advance(Duration.ofMillis(1));
            limiter.tryAcquire("new0");
        }
        assertEquals(100, limiter.keyCount(), "only the keys of the current window are held");
        clock.advance(Duration.ofSeconds(1));
        assertEquals(100, limiter.evictIdle());
        assertEquals(0, limiter.keyCount());
    }

    @Test
    void peekAndCancelHoldNoKey() {
        InMemoryRateLimiter limiter =
                limiter(new LimiterConfig(Algorithm.TOKEN_BUCKET, 2, Duration.ofSeconds(1), clock, false, 60, false));
        for (int i = 0; i < 100; i++) {
            assertTrue(limiter.peek("peek" + i, 1).allowed());
        }
        assertEquals(0, limiter.keyCount(), "a peek of a new key creates nothing");
        Reservation r = limiter.reserve("k", 1);
        clock.advance(Duration.ofSeconds(1));
        assertEquals(1, limiter.evictIdle());
        assertEquals(false, r.cancel(), "the key is gone, and so are its permits");
        assertEquals(0, limiter.keyCount(), "a cancel creates nothing");
    }

    /**
     * The default store keeps an idle key's state for a second: a key back within it decides on the kept state as on
     * a fresh one (its whole limit again), and only after it does a sweep evict the key.
     */
    @Test
    void anIdleKeyIsKeptForASecondAndDecidesAsAFreshOne() {
        InMemoryRateLimiter limiter = (InMemoryRateLimiter) InMemoryStore.create()
                .bind(new LimiterConfig(Algorithm.FIXED_WINDOW, 2, Duration.ofSeconds(1), clock, false, 60, false));
        assertEquals(Duration.ofSeconds(1), InMemoryStore.create().keepIdleKeys());
        clock.at("12:00:00");
        limiter.tryAcquire("k");
        limiter.tryAcquire("k");
        assertEquals(false, limiter.tryAcquire("k").allowed());

        clock.at("12:00:01.999"); // idle since 12:00:01, for 0.999 s
        assertEquals(0, limiter.evictIdle(), "idle for less than a second: kept");
        assertEquals(1, limiter.keyCount());
        assertTrue(limiter.tryAcquire("k").allowed(), "the kept state decides as a fresh one");
        assertTrue(limiter.tryAcquire("k").allowed());
        assertEquals(false, limiter.tryAcquire("k").allowed());

        clock.at("12:00:02.999"); // idle since 12:00:02, for 0.999 s
        assertEquals(0, limiter.evictIdle());
        clock.at("12:00:03");
        assertEquals(1, limiter.evictIdle(), "idle for a second: evicted");
        assertEquals(0, limiter.keyCount());
    }

    /** At the bound on keys, a new key evicts an idle key at once, however recently it became idle. */
    @Test
    void atTheBoundAnIdleKeyMakesRoomAtOnce() {
        InMemoryRateLimiter limiter = (InMemoryRateLimiter) InMemoryStore.builder()
                .maximumKeys(1)
                .keepIdleKeys(Duration.ofHours(1))
                .build()
                .bind(new LimiterConfig(Algorithm.FIXED_WINDOW, 1, Duration.ofSeconds(1), clock, false, 60, false));
        clock.at("12:00:00");
        assertTrue(limiter.tryAcquire("a").allowed());
        assertEquals(false, limiter.tryAcquire("b").allowed(), "a is live: no room");
        clock.at("12:00:01");
        assertTrue(limiter.tryAcquire("b").allowed(), "a is idle: evicted for b");
        assertEquals(1, limiter.keyCount());
    }

    @Test
    void keepIdleKeysIsChecked() {
        InMemoryStore.Builder b = InMemoryStore.builder();
        IllegalArgumentException negative =
                assertThrows(IllegalArgumentException.class, () -> b.keepIdleKeys(Duration.ofMillis(-1)));
        assertEquals("keepIdleKeys must be between 0 and 1 day, was -1ms", negative.getMessage());
        assertThrows(IllegalArgumentException.class, () -> b.keepIdleKeys(Duration.ofDays(2)));
        assertThrows(NullPointerException.class, () -> b.keepIdleKeys(null));
        assertEquals(
                Duration.ofDays(1), b.keepIdleKeys(Duration.ofDays(1)).build().keepIdleKeys());
    }

    /**
     * A lap that found every key live starts no new lap until one of them may be evictable, and then evicts it: the
     * keys of the first second, kept for ten seconds after their window, go on the first lap due after 12:00:11, while
     * a key that stays live is kept.
     */
    @Test
    void aLapThatFoundEveryKeyLiveStillEvictsThemOnceIdle() {
        InMemoryRateLimiter limiter = (InMemoryRateLimiter) InMemoryStore.builder()
                .keepIdleKeys(Duration.ofSeconds(10))
                .build()
                .bind(new LimiterConfig(Algorithm.FIXED_WINDOW, 1000, Duration.ofSeconds(1), clock, false, 60, false));
        clock.at("12:00:00");
        for (int i = 0; i < 100; i++) {
            limiter.tryAcquire("early" + i);
        }
        for (int ms = 1; ms < 11_000; ms++) { // the laps of this second and the next ten find every key live
            clock.advance(Duration.ofMillis(1));
            limiter.tryAcquire("live");
            if (ms == 10_999) {
                assertEquals(101, limiter.keyCount(), "idle for less than ten seconds: every key kept");
            }
        }
        for (int ms = 11_000; ms < 11_200; ms++) {
            clock.advance(Duration.ofMillis(1));
            limiter.tryAcquire("live");
        }
        assertEquals(1, limiter.keyCount(), "the early keys idle for ten seconds are evicted; the live one kept");
    }
}
