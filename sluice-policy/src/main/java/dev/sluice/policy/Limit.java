package dev.sluice.policy;

import dev.sluice.Algorithm;
import dev.sluice.spi.Durations;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One limit of a {@link Rule}: at most {@code requestsPerUnit} per {@code window} under {@code algorithm}, or
 * {@code unlimited}. Immutable.
 *
 * @param name            the {@code name} of the limit, which {@code replaces} of other limits refers to; empty if none
 * @param replaces        the names of the limits this one replaces when both apply to one request
 * @param unlimited       {@code unlimited: true}: never limited, never touches the store; then the window, unit and
 *                        algorithm are {@code null} and {@code requestsPerUnit} 0
 * @param requestsPerUnit the limit; 0 refuses every request, as envoyproxy/ratelimit does
 * @param window          the window
 * @param unit            the envoyproxy/ratelimit unit it was given as ({@code second} … {@code year}), or {@code null}
 *                        when given as a {@code window}
 * @param algorithm       the algorithm; {@link Algorithm#FIXED_WINDOW} unless the configuration names another
 */
public record Limit(
        String name,
        List<String> replaces,
        boolean unlimited,
        long requestsPerUnit,
        @Nullable Duration window,
        @Nullable String unit,
        @Nullable Algorithm algorithm) {

    /** Copies {@code replaces}; checks that a limited limit has a window and an algorithm. */
    public Limit {
        Objects.requireNonNull(name, "name must not be null");
        replaces = List.copyOf(replaces);
        if (!unlimited) {
            Objects.requireNonNull(window, "window must not be null");
            Objects.requireNonNull(algorithm, "algorithm must not be null");
            if (requestsPerUnit < 0) {
                throw new IllegalArgumentException("requestsPerUnit must be >= 0, was " + requestsPerUnit);
            }
        }
    }

    @Override
    public String toString() {
        if (unlimited) {
            return "unlimited" + (name.isEmpty() ? "" : " (" + name + ")");
        }
        Algorithm a = Objects.requireNonNull(algorithm, "required of a limited limit");
        return requestsPerUnit + "/"
                + (unit != null
                        ? unit
                        : Durations.format(Objects.requireNonNull(window, "required of a limited limit")))
                + " " + a.name().toLowerCase(java.util.Locale.ROOT) + (name.isEmpty() ? "" : " (" + name + ")");
    }
}
