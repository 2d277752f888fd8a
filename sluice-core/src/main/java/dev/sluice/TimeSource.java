package dev.sluice;

/**
 * Where a limiter on a shared store reads the time of each decision.
 *
 * <p>With several service instances sharing one limit, their clocks disagree by some milliseconds or more; a
 * decision timed by the store's own clock is immune to that skew, and is the default. {@link #CLOCK} uses the
 * limiter's injected {@link java.time.Clock}, which is what tests (and the store contract suite) use to move
 * time by hand.
 */
public enum TimeSource {
    /** The store's clock: Redis {@code TIME}, PostgreSQL {@code clock_timestamp()}, MongoDB {@code $$NOW}. */
    STORE,
    /** The limiter's {@link java.time.Clock}, sent with each request. */
    CLOCK
}
