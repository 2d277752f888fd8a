package dev.sluice.server.simulate;

import dev.sluice.Algorithm;
import java.time.Duration;
import java.util.Locale;

/**
 * The names the command line and the output give modes, algorithms, traffic and durations: {@code synchronized},
 * {@code sliding_tail} (as policy files name it), {@code cold-flood}, {@code 100ms}, {@code 1s}.
 */
final class Names {

    private Names() {}

    static String of(Simulation.Mode mode) {
        return mode.name().toLowerCase(Locale.ROOT);
    }

    static String of(Algorithm algorithm) {
        return algorithm.name().toLowerCase(Locale.ROOT);
    }

    static String of(Simulation.Traffic traffic) {
        return traffic.name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /** Whole hours, minutes or seconds where it is one ({@code 1h}, {@code 5m}, {@code 20s}), else milliseconds. */
    static String of(Duration d) {
        long ms = d.toMillis();
        if (ms % 3_600_000 == 0) {
            return ms / 3_600_000 + "h";
        }
        if (ms % 60_000 == 0) {
            return ms / 60_000 + "m";
        }
        if (ms % 1000 == 0) {
            return ms / 1000 + "s";
        }
        return ms + "ms";
    }
}
