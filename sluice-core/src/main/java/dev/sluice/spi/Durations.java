package dev.sluice.spi;

import java.time.Duration;

/**
 * Durations as users write them in a configuration or on a command line ({@code 500ms}, {@code 10s}, {@code 6h}), not
 * ISO-8601 ({@code PT10S}): how every message, log line and page of Sluice prints a duration.
 */
public final class Durations {

    private static final long[] UNIT_SECONDS = {86_400, 3_600, 60, 1};
    private static final String[] UNITS = {"d", "h", "m", "s"};

    private Durations() {}

    /**
     * {@code d} in the largest of {@code d}, {@code h}, {@code m}, {@code s} and {@code ms} that holds it in whole
     * units ({@code 90s}, {@code 1500ms}, {@code 1d}); in {@code ns} when none does; {@code 0s} for zero; as ISO-8601 past a long of nanoseconds
     * (about 292 years) when not whole seconds.
     */
    public static String format(Duration d) {
        if (d.isNegative()) {
            return d.toSeconds() == Long.MIN_VALUE ? d.toString() : "-" + format(d.negated());
        }
        if (d.toNanosPart() == 0) {
            long seconds = d.toSeconds();
            for (int i = 0; i < UNITS.length; i++) {
                if (seconds % UNIT_SECONDS[i] == 0 && (seconds != 0 || i == UNITS.length - 1)) {
                    return seconds / UNIT_SECONDS[i] + UNITS[i];
                }
            }
        }
        if (d.toSeconds() >= Long.MAX_VALUE / 1_000_000_000L) { // beyond a long of nanoseconds: as ISO-8601
            return d.toString();
        }
        if (d.toNanosPart() % 1_000_000 == 0) {
            return d.toMillis() + "ms";
        }
        return d.toNanos() + "ns";
    }
}
