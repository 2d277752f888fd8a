package dev.sluice.spi;

import dev.sluice.FailurePolicy;
import dev.sluice.LimiterConfig;
import dev.sluice.RateLimitListener;
import dev.sluice.RateLimiter;
import dev.sluice.TimeSource;

/**
 * A {@link RateLimiter} whose every decision is one call to a shared store's {@link AtomicDecider}: what every
 * shared store's {@link RateLimitStore#bind} returns, built by {@link #create}. It validates arguments, times requests
 * ({@link TimeSource}), applies the {@link FailurePolicy} when the store fails, keeps reservations, and tells the
 * limiter's and the store's {@link RateLimitListener}s of every decision, failure and call. With no listener at all,
 * store failures are logged: one warning a minute with their count.
 *
 * <p>Joint requests ({@link RateLimiter#tryAcquireAll}) over limiters of one store go to that store's
 * {@link SharedJoint}: one atomic call where the store offers it ({@link AtomicJointDecider}), else take and give
 * back.
 *
 * <p>Thread-safe; holds no lock and no per-key state of its own. Only {@link #create} makes one.
 */
public sealed interface SharedRateLimiter extends RateLimiter permits SharedLimiter {

    /**
     * A limiter with {@code config} deciding through {@code decider}, alone: joint requests over it take and give
     * back, and it has an over-limit cache of its own if {@code options} ask for one.
     */
    static SharedRateLimiter create(LimiterConfig config, AtomicDecider decider, SharedStoreOptions options) {
        return new SharedLimiter(config, decider, options, new SharedJoint(null, options));
    }

    /**
     * A limiter with {@code config} deciding through {@code decider}, whose joint requests go to {@code joint}: the
     * store's one {@link SharedJoint}, the same for every limiter it binds.
     */
    static SharedRateLimiter create(
            LimiterConfig config, AtomicDecider decider, SharedStoreOptions options, SharedJoint joint) {
        return new SharedLimiter(config, decider, options, joint);
    }

    /** The options of the store this limiter decides on. */
    SharedStoreOptions options();

    /**
     * How many calls to the store have failed or timed out since this limiter was built. The same count reaches a
     * {@link RateLimitListener#onStoreFailure listener}, which needs no cast.
     */
    long storeFailures();

    /** The joint of this limiter's store, which its joint requests go to: the same for every limiter the store binds. */
    SharedJoint joint();
}
