package dev.sluice;

/**
 * Limits the rate of requests per key. Build one with {@link #builder(Algorithm)}.
 *
 * <pre>{@code
 * RateLimiter limiter = RateLimiter.builder(Algorithm.SLIDING_TAIL)
 *         .limit(100, Duration.ofMinutes(1))
 *         .build();
 * Decision d = limiter.tryAcquire("client:abc");
 * if (!d.allowed()) {
 *     // answer 429, Retry-After: d.retryAfter()
 * }
 * }</pre>
 *
 * <p>Implementations are thread-safe. Every method decides atomically per key: concurrent callers on one key
 * never admit more than the limit. A rejection is a {@link Decision}, never an exception.
 *
 * <p>Each request method throws {@link IllegalArgumentException} when the key is null or empty or the cost is
 * not in {@code [1, limit]}, and a {@link SluiceException} when the store behind the limiter fails.
 */
public interface RateLimiter {

    /** A builder for a limiter running {@code algorithm}; the in-memory store is the default. */
    static RateLimiterBuilder builder(Algorithm algorithm) {
        return RateLimiterBuilder.forAlgorithm(algorithm);
    }

    /** The configuration this limiter was built with. */
    LimiterConfig config();

    /** Acquires one permit for {@code key} if the limit allows it. */
    default Decision tryAcquire(String key) {
        return tryAcquire(key, 1);
    }

    /**
     * Acquires {@code cost} permits for {@code key} if the limit allows all of them; otherwise acquires none
     * (unless {@link RateLimiterBuilder#countRejected(boolean) countRejected} is on).
     */
    Decision tryAcquire(String key, long cost);

    /**
     * Answers whether {@code cost} permits could be acquired now, consuming nothing. {@link Decision#remaining()}
     * is then the number of permits available now.
     */
    Decision peek(String key, long cost);

    /**
     * Acquires like {@link #tryAcquire(String, long)} and returns a handle that can give the permits back.
     */
    Reservation reserve(String key, long cost);
}
