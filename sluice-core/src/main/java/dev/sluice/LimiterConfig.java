package dev.sluice;

import dev.sluice.spi.Durations;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;

/**
 * The immutable, validated configuration of one {@link RateLimiter}, as built by {@link RateLimiterBuilder}.
 * Stores receive it through {@link dev.sluice.spi.RateLimitStore#bind(LimiterConfig)}.
 *
 * @param algorithm     the algorithm
 * @param limit         permits per window ({@code L}), positive
 * @param window        the window ({@code W}), positive and at most {@link #MAX_WINDOW}
 * @param clock         the only source of time
 * @param countRejected whether rejected requests consume their cost too
 * @param buckets       sub-windows per window; used by {@link Algorithm#SLIDING_WINDOW_COUNTER} only
 * @param strict        {@link Algorithm#SLIDING_WINDOW_COUNTER} only: also count the partly overlapping sub-window
 * @param listener      told of the limiter's decisions, store failures and store calls; {@link RateLimitListener#NONE}
 *                      for none
 */
public record LimiterConfig(
        Algorithm algorithm,
        long limit,
        Duration window,
        Clock clock,
        boolean countRejected,
        int buckets,
        boolean strict,
        RateLimitListener listener) {

    /** {@link Clock#systemUTC()}, one instance for the life of the VM. */
    private static final Clock SYSTEM_UTC = Clock.systemUTC();

    /** Sub-windows per window when none is given. */
    public static final int DEFAULT_BUCKETS = 60;

    /**
     * The longest window: 3653 days, ten years. Times are nanoseconds since the epoch in a {@code long}, which lasts
     * until 2262, and a state computes instants up to two windows ahead of now (the sliding tail's reset, the leaky
     * bucket's next arrival); ten years keeps every one of them exact until 2242.
     */
    public static final Duration MAX_WINDOW = Duration.ofDays(3653);

    /** Validates every field; the message names the bad value. */
    public LimiterConfig {
        Objects.requireNonNull(algorithm, "algorithm must not be null");
        Objects.requireNonNull(listener, "listener must not be null");
        Objects.requireNonNull(window, "window must not be null");
        Objects.requireNonNull(clock, "clock must not be null");
        if (limit <= 0) {
            throw new IllegalArgumentException("limit must be > 0, was " + limit);
        }
        checkWindow(window);
        long windowNanos = window.toNanos();
        if (buckets <= 0) {
            throw new IllegalArgumentException("buckets must be > 0, was " + buckets);
        }
        if (algorithm == Algorithm.SLIDING_WINDOW_COUNTER && buckets > windowNanos) {
            throw new IllegalArgumentException(
                    "buckets must be at most the window in nanoseconds (" + windowNanos + "), was " + buckets);
        }
    }

    /** A configuration without a listener. */
    public LimiterConfig(
            Algorithm algorithm,
            long limit,
            Duration window,
            Clock clock,
            boolean countRejected,
            int buckets,
            boolean strict) {
        this(algorithm, limit, window, clock, countRejected, buckets, strict, RateLimitListener.NONE);
    }

    static void checkWindow(Duration window) {
        Objects.requireNonNull(window, "window must not be null");
        if (window.isNegative() || window.isZero()) {
            throw new IllegalArgumentException("window must be > 0, was " + Durations.format(window));
        }
        if (window.compareTo(MAX_WINDOW) > 0) {
            throw new IllegalArgumentException("window must be at most " + Durations.format(MAX_WINDOW)
                    + " (ten years), was " + Durations.format(window));
        }
    }

    /**
     * The time now from {@link #clock()}, in nanoseconds since the epoch. The default clock, {@link Clock#systemUTC()},
     * is read through {@link System#nanoTime()} with an offset to the wall clock measured every second, which costs
     * less than its {@code instant()} and follows it to within the two clocks' drift over a second. A clock that is an
     * {@link EpochNanosClock} is read through {@link EpochNanosClock#epochNanos()}.
     */
    @SuppressWarnings("ReferenceEquality") // the one instance of the default clock, not any clock equal to it
    public long clockNanos() {
        if (clock == SYSTEM_UTC) {
            return SystemNanos.now();
        }
        if (clock instanceof EpochNanosClock c) {
            return c.epochNanos();
        }
        java.time.Instant i = clock.instant();
        return i.getEpochSecond() * 1_000_000_000L + i.getNano();
    }

    /** {@link #window()} in nanoseconds. */
    public long windowNanos() {
        return window.toNanos();
    }

    /** The size of one {@link Algorithm#SLIDING_WINDOW_COUNTER} sub-window: {@code W / buckets}, rounded down. */
    public long subWindowNanos() {
        return window.toNanos() / buckets;
    }

    /**
     * Checks the arguments of one request against this configuration.
     *
     * @throws IllegalArgumentException if {@code key} is null or empty, or {@code cost} is not in {@code [1, limit]}
     */
    public void checkRequest(String key, long cost) {
        if (key == null) {
            throw new IllegalArgumentException("key must not be null");
        }
        if (key.isEmpty()) {
            throw new IllegalArgumentException("key must not be empty, was \"\"");
        }
        if (cost <= 0) {
            throw new IllegalArgumentException("cost must be > 0, was " + cost);
        }
        if (cost > limit) {
            throw new IllegalArgumentException(
                    "cost must be <= the limit " + limit + ", was " + cost + " (such a request could never pass)");
        }
    }
}
