package dev.sluice.lease;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.RateLimiter;
import dev.sluice.TestClock;
import dev.sluice.memory.InMemoryCounterStore;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Locale;
import java.util.Random;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Fair shares (docs/leased-mode.md, "Fair shares"): instances that compete for a key note their demand in its record,
 * and a claim takes no more than its demand's share of the room left. A limit of 50 a second, 5,000 requests a second
 * in a fixed rotation (instance 1, 2, ..., n, 1, ...: every instance asks for more than the limit), rounds every 100 ms
 * (each instance's at its own phase), 6 s on a hand-moved clock over one in-memory counter store. Without the notes
 * the first instance to ask in each window took it all, and the others' smallest share was 0.
 */
class LeasedFairShareTest {

    private static final String KEY = "client:abc";
    private static final long LIMIT = 50;
    private static final long SECOND = 1_000_000_000L;
    private static final long STEP = SECOND / 5_000;
    private static final long ROUND = SECOND / 10;
    private static final int WINDOWS = 6;
    private static final Instant T = Instant.parse("2026-01-01T12:00:00Z");

    /**
     * Every algorithm, with 2, 10 and 30 instances (30: an even share, 1.67, is below a claim worth its round trip):
     * from the third window on, every instance admits at least half its even share in every window, the instances
     * together the whole limit, and never more than the limit in a window.
     */
    @ParameterizedTest
    @CsvSource({
        "FIXED_WINDOW, 2",
        "FIXED_WINDOW, 10",
        "FIXED_WINDOW, 30",
        "SLIDING_WINDOW_COUNTER, 2",
        "SLIDING_WINDOW_COUNTER, 10",
        "SLIDING_WINDOW_COUNTER, 30",
        "SLIDING_TAIL, 2",
        "SLIDING_TAIL, 10",
        "SLIDING_TAIL, 30"
    })
    void everyInstanceGetsAtLeastHalfItsEvenShareInEveryWindow(Algorithm algorithm, int instances) {
        long[][] admitted = rotation(algorithm, instances);
        for (int w = 0; w < admitted.length; w++) {
            long sum = Arrays.stream(admitted[w]).sum();
            assertTrue(sum <= LIMIT, "at most the limit in window " + w + ": " + sum);
            assertTrue(w < 2 || sum == LIMIT, "the whole limit in window " + w + ": " + Arrays.toString(admitted[w]));
        }
        double smallest = smallestShare(admitted, instances);
        print(algorithm, instances, admitted);
        assertTrue(smallest >= 0.5, algorithm + ", " + instances + " instances: smallest share " + smallest);
    }

    /**
     * Below the limit per instance (500 requests a second over 10 instances, each asked 50 times a second for a limit
     * of 50), each request sent to an instance drawn at random (seeded): a sliding tail then leaves no instance
     * without an admission in a window and admits the whole limit in each. The fixed rotation at the same rate does
     * not share evenly (see "Known limits" in docs/leased-mode.md): each instance asks at the same phase in every
     * window, and a sliding tail's room frees at the moment it was taken a window before, where the instance that
     * took it asks again.
     */
    @ParameterizedTest
    @CsvSource({"SLIDING_TAIL, 10"})
    void atRandomMomentsBelowTheLimitASlidingTailLeavesNoInstanceWithNothing(Algorithm algorithm, int instances) {
        assertEveryInstanceAdmitsInEveryWindow(
                algorithm, instances, rotation(algorithm, instances, SECOND / 500, new Random(20261128)));
    }

    private static void assertEveryInstanceAdmitsInEveryWindow(Algorithm algorithm, int instances, long[][] admitted) {
        print(algorithm, instances, admitted);
        for (int w = 2; w < admitted.length; w++) {
            long sum = 0;
            for (int i = 0; i < instances; i++) {
                assertTrue(admitted[w][i] > 0, "window " + w + ", instance " + i + ": " + Arrays.toString(admitted[w]));
                sum += admitted[w][i];
            }
            assertTrue(sum == LIMIT, "the whole limit in window " + w + ": " + Arrays.toString(admitted[w]));
        }
    }

    /** Prints the smallest share, and the least part of the limit the instances admitted together in a window. */
    private static void print(Algorithm algorithm, int instances, long[][] admitted) {
        long least = Long.MAX_VALUE;
        for (int w = 2; w < admitted.length; w++) {
            long sum = 0;
            for (long a : admitted[w]) {
                sum += a;
            }
            least = Math.min(least, sum);
        }
        System.out.printf(
                Locale.ROOT,
                "%s, %d instances: smallest share %.2f of an even share, at least %.2f of the limit in a window%n",
                algorithm,
                instances,
                smallestShare(admitted, instances),
                least / (double) LIMIT);
    }

    /** The least one instance admitted in a window from the third on, over an even share of the limit. */
    private static double smallestShare(long[][] admitted, int instances) {
        long least = Long.MAX_VALUE;
        for (int w = 2; w < admitted.length; w++) {
            for (long a : admitted[w]) {
                least = Math.min(least, a);
            }
        }
        return least / ((double) LIMIT / instances);
    }

    private static long[][] rotation(Algorithm algorithm, int instances) {
        return rotation(algorithm, instances, STEP, null);
    }

    /**
     * Runs the traffic: a request every {@code step}, to the instances in turn, or to one drawn from {@code random}
     * if given; per window (second), what each instance admitted.
     */
    private static long[][] rotation(Algorithm algorithm, int instances, long step, @Nullable Random random) {
        TestClock clock = new TestClock(T);
        InMemoryCounterStore shared = InMemoryCounterStore.create();
        LeasedStore[] stores = new LeasedStore[instances];
        RateLimiter[] limiters = new RateLimiter[instances];
        long[] nextRound = new long[instances];
        for (int i = 0; i < instances; i++) {
            stores[i] = LeaseTests.manual(new FlakyCounterStore(shared), Duration.ofNanos(ROUND));
            limiters[i] = LeaseTests.limiter(stores[i], clock, algorithm, LIMIT, Duration.ofSeconds(1));
            nextRound[i] = ROUND * (i + 1) / instances;
        }
        long t0 = T.getEpochSecond() * SECOND;
        long[][] admitted = new long[WINDOWS][instances];
        try {
            long request = 0;
            for (long t = 0; t < WINDOWS * SECOND; t += step, request++) {
                for (int i = 0; i < instances; i++) {
                    if (nextRound[i] <= t) {
                        clock.set(Instant.ofEpochSecond(0, t0 + nextRound[i]));
                        stores[i].refresh();
                        nextRound[i] += ROUND;
                    }
                }
                clock.set(Instant.ofEpochSecond(0, t0 + t));
                int i = random == null ? (int) (request % instances) : random.nextInt(instances);
                if (limiters[i].tryAcquire(KEY).allowed()) {
                    admitted[(int) (t / SECOND)][i]++;
                }
            }
        } finally {
            for (LeasedStore s : stores) {
                s.close();
            }
        }
        return admitted;
    }
}
