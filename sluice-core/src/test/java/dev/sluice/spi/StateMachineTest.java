package dev.sluice.spi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.LimiterConfig;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class StateMachineTest {

    private static LimiterConfig config(Algorithm algorithm, long limit, boolean countRejected) {
        return new LimiterConfig(
                algorithm,
                limit,
                Duration.ofSeconds(10),
                Clock.systemUTC(),
                countRejected,
                4,
                algorithm == Algorithm.SLIDING_WINDOW_COUNTER && countRejected);
    }

    /**
     * A state snapshotted and restored before every request decides exactly as one kept in memory throughout, and
     * its snapshot is the same: nothing the algorithm needs is lost in the numbers.
     */
    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void aRestoredStateDecidesAsTheStateItWasTakenFrom(Algorithm algorithm) {
        for (boolean countRejected : new boolean[] {false, true}) {
            Random random = new Random(algorithm.ordinal() * 2L + (countRejected ? 1 : 0));
            LimiterConfig config = config(algorithm, 5, countRejected);
            long now = 1_700_000_000_000_000_000L;
            StateMachine kept = StateMachine.fresh(config);
            StateMachine carried = StateMachine.fresh(config);
            List<long[]> places = new ArrayList<>();
            int admitted = 0;
            int rejected = 0;
            for (int step = 0; step < 2_000; step++) {
                now += random.nextInt(random.nextBoolean() ? 100 : 5_000) * 1_000_000L; // bursts and lulls
                carried = StateMachine.restore(config, carried.snapshot());
                String at = algorithm + " countRejected=" + countRejected + " step " + step;
                if (random.nextInt(5) == 0 && !places.isEmpty()) {
                    long[] taken = places.remove(random.nextInt(places.size()));
                    assertEquals(
                            kept.giveBack(config, now, taken[0], taken[1]),
                            carried.giveBack(config, now, taken[0], taken[1]),
                            at + " giveBack");
                } else {
                    long cost = 1 + random.nextInt(2);
                    boolean consume = random.nextInt(6) != 0;
                    StoreDecision expected = kept.decide(config, now, cost, consume);
                    assertEquals(expected, carried.decide(config, now, cost, consume), at + " decide");
                    if (consume && expected.allowed()) {
                        places.add(new long[] {cost, expected.place()});
                        admitted++;
                    } else if (consume) {
                        rejected++;
                    }
                }
                assertArrayEquals(kept.snapshot(), carried.snapshot(), at + " snapshot");
                assertEquals(kept.expiresAt(config), carried.expiresAt(config), at + " expiresAt");
            }
            String mix =
                    algorithm + " countRejected=" + countRejected + ": admitted " + admitted + ", rejected " + rejected;
            assertTrue(admitted > 100 && rejected > 100, mix + ": the traffic tests one side too little");
        }
    }

    @Test
    void aSnapshotOfTheWrongShapeIsRejectedWithTheNumbersInTheMessage() {
        IllegalArgumentException e = assertThrows(
                IllegalArgumentException.class,
                () -> StateMachine.restore(config(Algorithm.TOKEN_BUCKET, 5, false), new long[] {1, 2}));
        assertTrue(e.getMessage().contains("[1, 2]"), e.getMessage());
        e = assertThrows(
                IllegalArgumentException.class,
                () -> StateMachine.restore(config(Algorithm.SLIDING_LOG, 5, false), new long[] {2, 9, 1, 5, 1}));
        assertTrue(e.getMessage().contains("[2, 9, 1, 5, 1]"), e.getMessage());
    }

    @Test
    void aConfigOfAnotherAlgorithmIsRejected() {
        StateMachine s = StateMachine.fresh(config(Algorithm.FIXED_WINDOW, 5, false));
        IllegalArgumentException e = assertThrows(
                IllegalArgumentException.class, () -> s.decide(config(Algorithm.SLIDING_TAIL, 5, false), 0, 1, true));
        assertTrue(e.getMessage().contains("SLIDING_TAIL"), e.getMessage());
    }
}
