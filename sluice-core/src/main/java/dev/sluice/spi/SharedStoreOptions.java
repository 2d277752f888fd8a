package dev.sluice.spi;

import dev.sluice.Algorithm;
import dev.sluice.FailurePolicy;
import dev.sluice.LimiterConfig;
import dev.sluice.RateLimitListener;
import dev.sluice.TimeSource;
import java.time.Duration;
import java.util.Objects;

/**
 * What every shared store is configured with, whatever the store: set through {@link SharedStoreBuilder}.
 *
 * @param timeSource           whose clock times decisions
 * @param failurePolicy        the answer when the store fails or times out
 * @param timeout              how long one call to the store may take before it counts as failed
 * @param failClosedRetryAfter the {@code retryAfter} of a denial under {@link FailurePolicy#FAIL_CLOSED}
 * @param namespace            the prefix of every name the store writes, so limiters of several applications
 *                             can share one server
 * @param listener             told of every decision, store failure and store call of every limiter of the store
 * @param overLimitCache       the most refusals the store's over-limit cache keeps, 0 for none
 *                             ({@link SharedStoreBuilder#overLimitCache(int)})
 */
public record SharedStoreOptions(
        TimeSource timeSource,
        FailurePolicy failurePolicy,
        Duration timeout,
        Duration failClosedRetryAfter,
        String namespace,
        RateLimitListener listener,
        int overLimitCache) {

    /** Validates every field; the message names the bad value. */
    public SharedStoreOptions {
        Objects.requireNonNull(timeSource, "timeSource must not be null");
        Objects.requireNonNull(failurePolicy, "failurePolicy must not be null");
        requirePositive("timeout", timeout);
        requirePositive("failClosedRetryAfter", failClosedRetryAfter);
        requireNamespace(namespace);
        Objects.requireNonNull(listener, "listener must not be null");
        if (overLimitCache < 0) {
            throw new IllegalArgumentException("overLimitCache must be >= 0, was " + overLimitCache);
        }
    }

    /** The options without an over-limit cache. */
    public SharedStoreOptions(
            TimeSource timeSource,
            FailurePolicy failurePolicy,
            Duration timeout,
            Duration failClosedRetryAfter,
            String namespace,
            RateLimitListener listener) {
        this(timeSource, failurePolicy, timeout, failClosedRetryAfter, namespace, listener, 0);
    }

    /**
     * {@code namespace}, checked for a store's builder, shared and counter stores alike: not null, not empty, without
     * {@code '$'} or a NUL, and not starting with {@code "system."}. One rule for every store, the union of what the
     * servers refuse at the start of a name (MongoDB refuses the last three in collection names), so a namespace good
     * for one store is good for all.
     *
     * @throws NullPointerException     if {@code namespace} is null
     * @throws IllegalArgumentException otherwise, naming {@code namespace}
     */
    public static String requireNamespace(String namespace) {
        Objects.requireNonNull(namespace, "namespace must not be null");
        if (namespace.isEmpty()) {
            throw new IllegalArgumentException("namespace must not be empty, was ''");
        }
        if (namespace.indexOf('$') >= 0 || namespace.indexOf('\0') >= 0 || namespace.startsWith("system.")) {
            throw new IllegalArgumentException(
                    "namespace must hold no '$' or NUL and not start with 'system.', was '" + namespace + "'");
        }
        return namespace;
    }

    /**
     * {@code d}, checked for a store's builder: not null, greater than zero and within a long of nanoseconds.
     *
     * @throws NullPointerException     if {@code d} is null, naming {@code name}
     * @throws IllegalArgumentException if {@code d} is zero, negative or too long, naming {@code name} and {@code d}
     */
    public static Duration requirePositive(String name, Duration d) {
        Objects.requireNonNull(d, name + " must not be null");
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(name + " must be > 0, was " + Durations.format(d));
        }
        return requireNanos(name, d);
    }

    /**
     * {@code d}, checked for a store's builder: not null and zero or more (any length: a store that adds it to a time
     * saturates).
     *
     * @throws NullPointerException     if {@code d} is null, naming {@code name}
     * @throws IllegalArgumentException if {@code d} is negative, naming {@code name} and {@code d}
     */
    public static Duration requireNonNegative(String name, Duration d) {
        Objects.requireNonNull(d, name + " must not be null");
        if (d.isNegative()) {
            throw new IllegalArgumentException(name + " must be >= 0, was " + Durations.format(d));
        }
        return d;
    }

    private static Duration requireNanos(String name, Duration d) {
        try {
            long unused = d.toNanos(); // throws if it does not fit
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException(name + " must fit in a long of nanoseconds, was " + d, e);
        }
        return d;
    }

    /**
     * A short name for the shape of a limiter's state, so that limiters with different algorithms or windows on
     * the same key never read each other's state: for example {@code tb:60000000000} for a token bucket over one
     * minute, {@code swc:60000000000:60s} for a strict sub-window counter with 60 sub-windows. The limit is not part
     * of it: a limit raised or lowered keeps the counts already taken.
     */
    public static String shape(LimiterConfig config) {
        String base = config.algorithm().code() + ":" + config.windowNanos();
        if (config.algorithm() == Algorithm.SLIDING_WINDOW_COUNTER) {
            return base + ":" + config.buckets() + (config.strict() ? "s" : "");
        }
        return base;
    }
}
