package dev.sluice.algorithm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.LimiterConfig;
import dev.sluice.TestClock;
import dev.sluice.Variants;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link AlgorithmState#expiresAt}: from then on a state decides exactly as a fresh state would, cancels included,
 * which is what lets a store drop it. Random histories, then the same random requests on the state and on a fresh
 * one from its expiry (or later).
 */
class StateExpiryTest {

    @ParameterizedTest(name = "{0} countRejected={1} strict={2}")
    @MethodSource("dev.sluice.Variants#all")
    void fromItsExpiryAStateDecidesAsAFreshOne(Algorithm algorithm, boolean countRejected, boolean strict) {
        long window = 1_000;
        Params p = new Params(
                new LimiterConfig(algorithm, 5, Duration.ofNanos(window), new TestClock(), countRejected, 4, strict));
        Random random = new Random(Variants.seed(algorithm, countRejected, strict));
        int expiredAtSomePoint = 0;
        for (int run = 0; run < 300; run++) {
            AlgorithmState state = AlgorithmState.create(algorithm, p);
            long now = 1_767_268_800_000_000_000L + random.nextInt(10_000);
            List<long[]> old = new ArrayList<>(); // {cost, place}
            int requests = random.nextInt(12);
            for (int i = 0; i < requests; i++) {
                now += random.nextInt((int) window / 2);
                long cost = 1 + random.nextInt(5);
                Decision d = state.decide(p, now, cost, true);
                if (d.allowed() && random.nextBoolean()) {
                    old.add(new long[] {cost, state.place(p, now)});
                }
            }
            long expiresAt = state.expiresAt(p);
            if (expiresAt != Long.MIN_VALUE) {
                assertTrue(
                        expiresAt > now - 3 * window && expiresAt <= now + 2 * window,
                        "expiry within two windows of the last request: " + (expiresAt - now));
            }
            long t = Math.max(now, expiresAt) + (random.nextBoolean() ? 0 : random.nextInt((int) window));
            expiredAtSomePoint += expiresAt > now ? 1 : 0;
            AlgorithmState fresh = AlgorithmState.create(algorithm, p);
            List<long[]> mine = new ArrayList<>(); // {cost, state's place, fresh's place}
            for (int i = 0; i < 10; i++) {
                String at = "run " + run + " request " + i + " at expiry + " + (t - expiresAt);
                int op = random.nextInt(4);
                if (op == 0 && !old.isEmpty()) {
                    long[] r = old.remove(0);
                    assertFalse(state.giveBack(p, t, r[0], r[1]), at + ": a cancel from before the expiry");
                } else if (op == 1 && !mine.isEmpty()) {
                    long[] r = mine.remove(0);
                    assertEquals(fresh.giveBack(p, t, r[0], r[2]), state.giveBack(p, t, r[0], r[1]), at + ": cancel");
                } else {
                    long cost = 1 + random.nextInt(5);
                    boolean consume = op != 3;
                    Decision expected = fresh.decide(p, t, cost, consume);
                    assertEquals(expected, state.decide(p, t, cost, consume), at);
                    if (consume && expected.allowed()) {
                        mine.add(new long[] {cost, state.place(p, t), fresh.place(p, t)});
                    }
                }
                t += random.nextInt((int) window / 4);
            }
        }
        assertTrue(expiredAtSomePoint > 100, "histories whose state was still live: " + expiredAtSomePoint);
    }
}
