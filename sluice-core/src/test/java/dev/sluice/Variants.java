package dev.sluice;

import java.util.stream.Stream;
import org.junit.jupiter.params.provider.Arguments;

/**
 * The limiter variants whose states behave differently, for parameterized tests over all of them: every algorithm
 * with and without {@code countRejected}, and the sub-window counter strict as well. Each is
 * {@code (Algorithm, boolean countRejected, boolean strict)}; use as {@code @MethodSource("dev.sluice.Variants#all")}
 * (JUnit reads the factory reflectively, so it need not be public).
 */
public final class Variants {

    private Variants() {}

    static Stream<Arguments> all() {
        Stream.Builder<Arguments> b = Stream.builder();
        for (Algorithm algorithm : Algorithm.values()) {
            for (boolean countRejected : new boolean[] {false, true}) {
                b.add(Arguments.of(algorithm, countRejected, false));
                if (algorithm == Algorithm.SLIDING_WINDOW_COUNTER) {
                    b.add(Arguments.of(algorithm, countRejected, true));
                }
            }
        }
        return b.build();
    }

    /** A random seed of the variant's own, the same in every run. */
    public static long seed(Algorithm algorithm, boolean countRejected, boolean strict) {
        return algorithm.ordinal() * 4L + (countRejected ? 1 : 0) + (strict ? 2 : 0);
    }
}
