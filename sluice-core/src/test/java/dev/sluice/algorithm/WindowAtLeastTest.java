package dev.sluice.algorithm;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.LimiterConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link AlgorithmState#windowAtLeast}, which skips the division while a time stays in the window before, against
 * the division itself: around every window edge, across zero and near both ends of a long.
 */
class WindowAtLeastTest {

    private static final long[] WINDOWS = {
        1, 2, 7, 1_000_000, 100_000_000, 60_000_000_000L, 86_400_000_000_000L, LimiterConfig.MAX_WINDOW.toNanos()
    };

    private static List<Long> times(Random random, long w) {
        List<Long> t = new ArrayList<>(List.of(
                Long.MIN_VALUE,
                Long.MIN_VALUE + 1,
                Long.MIN_VALUE + w,
                -w - 1,
                -w,
                -1L,
                0L,
                1L,
                w - 1,
                w,
                w + 1,
                1_764_000_000_000_000_000L,
                Long.MAX_VALUE - w,
                Long.MAX_VALUE - 1,
                Long.MAX_VALUE));
        for (int i = 0; i < 30; i++) {
            t.add(random.nextLong());
        }
        return t;
    }

    @Test
    void isTheLaterOfTheCurrentWindowAndTheWindowOfNow() {
        Random random = new Random(7);
        for (long w : WINDOWS) {
            List<Long> times = times(random, w);
            List<Long> currents = new ArrayList<>(List.of(Long.MIN_VALUE));
            for (long t : times) {
                long k = Math.floorDiv(t, w);
                if (Math.multiplyHigh(k, w) == (k * w) >> 63) { // a window whose start is a long, as every state's
                    currents.add(k);
                }
            }
            for (long current : currents) {
                List<Long> nows = new ArrayList<>(times);
                if (current != Long.MIN_VALUE) {
                    long start = current * w;
                    for (long d : new long[] {-w - 1, -w, -1, 0, 1, w / 2, w - 1, w, w + 1, 2 * w}) {
                        nows.add(start + d); // may wrap around: still a time, still must be right
                    }
                }
                for (long now : nows) {
                    assertEquals(
                            Math.max(current, Math.floorDiv(now, w)),
                            AlgorithmState.windowAtLeast(current, now, w),
                            "current " + current + ", now " + now + ", w " + w);
                }
            }
        }
    }
}
