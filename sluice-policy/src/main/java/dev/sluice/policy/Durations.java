package dev.sluice.policy;

import java.time.Duration;

/** Durations as users write them in a configuration ({@code 500ms}, {@code 10s}, {@code 6h}), not ISO-8601. */
final class Durations {

    private static final long[] UNIT_SECONDS = {86_400, 3_600, 60, 1};
    private static final String[] UNITS = {"d", "h", "m", "s"};

    private Durations() {}

    /**
     * {@code d} in the largest of {@code d}, {@code h}, {@code m}, {@code s} and {@code ms} that holds it in whole
     * units ({@code 90s}, {@code 1500ms}, {@code 1d}); in {@code ns} when none does; {@code 0s} for zero.
     */
    static String format(Duration d) {
        if (d.isNegative()) {
            return "-" + format(d.negated());
        }
        if (d.toNanosPart() == 0) {
            long seconds = d.toSeconds();
            for (int i = 0; i < UNITS.length; i++) {
                if (seconds % UNIT_SECONDS[i] == 0 && (seconds != 0 || i == UNITS.length - 1)) {
                    return seconds / UNIT_SECONDS[i] + UNITS[i];
                }
            }
        }
        if (d.toNanosPart() % 1_000_000 == 0) {
            return d.toMillis() + "ms";
        }
        return d.toNanos() + "ns";
    }
}
