package dev.sluice.server.simulate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.server.simulate.Simulation.Mode;
import dev.sluice.server.simulate.Simulation.Result;
import dev.sluice.server.simulate.Simulation.Setup;
import dev.sluice.server.simulate.Simulation.Traffic;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The accuracy grid of docs/leased-mode.md, in {@code simulate}'s engine ({@link Simulation}): 2, 10 and 30 instances, rounds every 50 ms, 100 ms and 1 s, an even, random and skewed
 * spread, the three algorithms, limits 50 and 60, 500/s offered. Runs of 6 s here (20 s in the report).
 */
class LeasedAccuracyTest {

    private static final Traffic[] SPREADS = {Traffic.EVEN, Traffic.RANDOM, Traffic.SKEWED};

    private static final Algorithm[] ALGORITHMS = {
        Algorithm.FIXED_WINDOW, Algorithm.SLIDING_WINDOW_COUNTER, Algorithm.SLIDING_TAIL
    };

    static Stream<Setup> grid() {
        List<Setup> setups = new ArrayList<>();
        for (Algorithm a : ALGORITHMS) {
            for (long limit : new long[] {50, 60}) {
                for (int n : new int[] {2, 10, 30}) {
                    for (int ms : new int[] {50, 100, 1000}) {
                        for (Traffic spread : SPREADS) {
                            setups.add(Setup.of(Mode.LEASED, a, n, Duration.ofMillis(ms))
                                    .traffic(spread, 3)
                                    .limit(limit)
                                    .seconds(6));
                        }
                    }
                }
            }
        }
        return setups.stream();
    }

    /**
     * In every run the algorithm's own measure of all admitted requests never passes the limit (for the fixed window:
     * no window admits more than L), whatever the instances, interval and spread, and at least 95% of the limit is
     * admitted on average, and at least 95% in every second after the first, at every interval. With a round every 50
     * or 100 ms (a tenth of the window or less) the store sees at most 3 calls per instance per interval; with a round
     * every second (as long as the window) at most 25: a contended key claims for a tenth of a window at a time, so it
     * calls about as often per second as with rounds every 100 ms.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("grid")
    void neverOverTheLimitAndCloseToIt(Setup setup) {
        Result r = Simulation.run(setup);
        assertTrue(r.peakMeasure() <= setup.limit(), "peak of M " + r.peakMeasure());
        assertTrue(r.maxPerWindow() <= setup.limit() || setup.algorithm() != Algorithm.FIXED_WINDOW);
        assertTrue(
                r.meanPerWindow() >= 0.95 * setup.limit(),
                String.format(Locale.ROOT, "mean %.1f/s", r.meanPerWindow()));
        boolean tenth = setup.interval().toMillis() <= 100;
        for (int s = 1; s < r.admitted().length; s++) {
            assertTrue(r.admitted()[s] >= 0.95 * setup.limit(), "second " + s + ": " + r.admitted()[s]);
        }
        double calls = r.callsPerInstancePerInterval();
        assertTrue(
                calls <= (tenth ? 3 : 25), String.format(Locale.ROOT, "%.2f calls per instance per interval", calls));
    }

    static Stream<Setup> floods() {
        List<Setup> setups = new ArrayList<>();
        for (Algorithm a : ALGORITHMS) {
            for (int n : new int[] {2, 10, 30}) {
                for (int ms : new int[] {50, 100, 1000}) {
                    setups.add(Setup.of(Mode.LEASED, a, n, Duration.ofMillis(ms))
                            .traffic(Traffic.COLD_FLOOD, 3)
                            .rate(10_000)
                            .seconds(2));
                }
            }
        }
        return setups.stream();
    }

    /**
     * A flood of 10,000/s on a key new to every instance: synchronized mode lets each instance spend the whole limit
     * before its first round (up to 1,000 in the first second with 30 instances); leased mode admits exactly the limit.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("floods")
    void aFloodOnAKeyNewToEveryInstanceAdmitsExactlyTheLimit(Setup setup) {
        Result r = Simulation.run(setup);
        assertEquals(setup.limit(), r.admitted()[0]);
        assertTrue(r.peakMeasure() <= setup.limit());
    }

    /**
     * The store calls of a busy key do not grow with its request rate: 10 instances, a round every 100 ms, a limit of
     * 50 a second offered 5,000 and 50,000 a second at random (100 and 1,000 times the limit). At most 3 calls per
     * instance per interval, never over the limit, and at least 95% of it admitted.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(
            value = Algorithm.class,
            names = {"FIXED_WINDOW", "SLIDING_WINDOW_COUNTER", "SLIDING_TAIL"})
    void callsDoNotGrowWithTheRequestRate(Algorithm algorithm) {
        for (int offered : new int[] {5_000, 50_000}) {
            Setup setup = Setup.of(Mode.LEASED, algorithm, 10, Duration.ofMillis(100))
                    .traffic(Traffic.RANDOM, 3)
                    .rate(offered)
                    .seconds(4);
            Result r = Simulation.run(setup);
            assertTrue(r.peakMeasure() <= setup.limit(), setup + ": peak of M " + r.peakMeasure());
            assertTrue(r.meanPerWindow() >= 0.95 * setup.limit(), setup + ": mean " + r.meanPerWindow());
            double calls = r.callsPerInstancePerInterval();
            assertTrue(
                    calls <= 3, String.format(Locale.ROOT, "%s: %.2f calls per instance per interval", setup, calls));
        }
    }
}
