package dev.sluice.spi;

/**
 * The one primitive a shared store offers in exact mode: decide one request for one key atomically, in one
 * round trip (a Lua script, one SQL statement, one {@code findOneAndUpdate}). A store creates one decider per
 * bound {@link dev.sluice.LimiterConfig}; {@link SharedRateLimiter} turns it into a {@link dev.sluice.RateLimiter}.
 *
 * <p>The decider runs the algorithm of its configuration with exactly the semantics of the in-memory store
 * ({@code dev.sluice.algorithm}); the store contract suite in {@code sluice-testkit} checks that request by
 * request. A store may keep time at a coarser resolution than the nanosecond (Redis keeps microseconds): it
 * floors the request time to its resolution and rounds every duration it reports up to it.
 *
 * <p>Implementations are thread-safe. Each call returns or throws within the store's configured timeout. An
 * {@link IllegalStateException} says the store (or the client it runs on) has been closed: a mistake of the
 * application, which {@link SharedRateLimiter} passes to the caller. Any other exception is a store failure, which it
 * hands to the failure policy. Arguments have been validated before a call.
 */
public interface AtomicDecider {

    /** Passed as {@code nowNanos} when the store's own clock times the decision ({@link dev.sluice.TimeSource#STORE}). */
    long STORE_TIME = Long.MIN_VALUE;

    /**
     * Decides a request of {@code cost} for {@code key}. With {@code consume} the store takes the cost when the
     * request is admitted (and, with {@code countRejected}, when it is not); without, it changes nothing
     * ({@code peek}).
     *
     * @param nowNanos nanoseconds since the epoch from the limiter's clock, or {@link #STORE_TIME}
     */
    StoreDecision decide(String key, long cost, boolean consume, long nowNanos);

    /**
     * Gives back {@code cost} permits that an admitted request took at {@code place}, as far as they are still
     * held there, never letting the key exceed its limit. A window that has passed and a log entry that has
     * expired hold none; for the buckets the place is the time of the request, and a token bucket that has been
     * full (a leaky bucket that has been empty) at any time since holds none, or the permits would come back twice.
     *
     * @param nowNanos as for {@link #decide}
     * @return whether any permits were returned
     */
    boolean giveBack(String key, long cost, long place, long nowNanos);
}
