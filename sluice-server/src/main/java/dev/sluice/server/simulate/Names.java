package dev.sluice.server.simulate;

import dev.sluice.Algorithm;
import dev.sluice.spi.Durations;
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

    /** As every message of Sluice prints a duration: {@code 100ms}, {@code 1s}, {@code 5m}. */
    static String of(Duration d) {
        return Durations.format(d);
    }
}
