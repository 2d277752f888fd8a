package dev.sluice.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
        return (InMemoryRateLimiter) InMemoryStore.create().bind(config);
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
}
