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

    /**
     * A measured {@code d} (a log's span, a time left) as {@link #format} prints it once rounded, half up, to whole
     * units of the unit below the largest of {@code d}, {@code h}, {@code m} and {@code s} that {@code d} reaches:
     * {@code 3600002ms} is {@code 1h}, {@code 359998ms} is {@code 6m}, {@code 3725s} is {@code 62m},
     * {@code 1501ms} stays {@code 1501ms}. Below a second, or past a long of nanoseconds, as {@link #format}.
     */
    public static String approximately(Duration d) {
        if (d.isNegative()) {
            return d.toSeconds() == Long.MIN_VALUE ? d.toString() : "-" + approximately(d.negated());
        }
        long seconds = d.toSeconds();
        if (seconds == 0 || seconds >= Long.MAX_VALUE / 1_000_000_000L) {
            return format(d);
        }
        for (int i = 0; i < UNITS.length - 1; i++) {
            if (seconds >= UNIT_SECONDS[i]) {
                long step = UNIT_SECONDS[i + 1];
                long rest = (seconds % step) * 1_000_000_000L + d.toNanosPart();
                long steps = seconds / step + (2 * rest >= step * 1_000_000_000L ? 1 : 0);
                return format(Duration.ofSeconds(steps * step));
            }
        }
        long millis = (d.toNanos() + 500_000) / 1_000_000; // under a minute: whole milliseconds
        return format(Duration.ofMillis(millis));
    }
}
