package dev.sluice;

import java.util.Objects;

/**
 * One limit of a joint request: {@code cost} permits of {@code key} under {@code limiter}. A request that must pass
 * several limits at once (per second and per day, per client and per user) is a list of these, decided by
 * {@link RateLimiter#tryAcquireAll(java.util.List)}: it passes only if every one passes, and a refused request
 * consumes from none.
 *
 * @param limiter the limit
 * @param key     the key under that limit, not empty
 * @param cost    permits, in {@code [1, limiter's limit]}
 */
public record Acquisition(RateLimiter limiter, String key, long cost) {

    /**
     * Validates the request against the limiter's configuration.
     *
     * @throws NullPointerException     if {@code limiter} is null
     * @throws IllegalArgumentException if {@code key} is null or empty, or {@code cost} is not in {@code [1, limit]}
     */
    public Acquisition {
        Objects.requireNonNull(limiter, "limiter must not be null");
        limiter.config().checkRequest(key, cost);
    }

    /** One permit of {@code key} under {@code limiter}. */
    public static Acquisition of(RateLimiter limiter, String key) {
        return new Acquisition(limiter, key, 1);
    }

    /** {@code cost} permits of {@code key} under {@code limiter}. */
    public static Acquisition of(RateLimiter limiter, String key, long cost) {
        return new Acquisition(limiter, key, cost);
    }
}
