package dev.sluice.spi;

import dev.sluice.FailurePolicy;
import dev.sluice.RateLimitListener;
import dev.sluice.TimeSource;
import java.time.Duration;
import java.util.Objects;

/**
 * The options every shared store's builder has; a store's builder extends this and adds its own (a client, a
 * table name). Not thread-safe; setters validate at once.
 *
 * @param <B> the concrete builder, returned by every setter
 */
public abstract class SharedStoreBuilder<B extends SharedStoreBuilder<B>> extends StoreBuilder<B> {

    /** The default {@link #timeout(Duration)}. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofMillis(250);
    /** The default {@link #failClosedRetryAfter(Duration)}. */
    public static final Duration DEFAULT_FAIL_CLOSED_RETRY_AFTER = Duration.ofSeconds(1);
    /**
     * About the bytes of heap one entry of the {@link #overLimitCache(int) over-limit cache} takes with a key of 40
     * characters: to size the cache from a budget in bytes, divide by this.
     */
    public static final int OVER_LIMIT_CACHE_ENTRY_BYTES = 256;

    private TimeSource timeSource = TimeSource.STORE;
    private FailurePolicy failurePolicy = FailurePolicy.FAIL_OPEN;
    private Duration failClosedRetryAfter = DEFAULT_FAIL_CLOSED_RETRY_AFTER;
    private int overLimitCache;

    /** Starts with every option at its default; for a store's own builder to call. */
    protected SharedStoreBuilder() {
        super(DEFAULT_TIMEOUT);
    }

    /** Whose clock times decisions; default {@link TimeSource#STORE}. */
    public B timeSource(TimeSource timeSource) {
        this.timeSource = Objects.requireNonNull(timeSource, "timeSource must not be null");
        return self();
    }

    /** The answer when the store fails or times out; default {@link FailurePolicy#FAIL_OPEN}. */
    public B failurePolicy(FailurePolicy failurePolicy) {
        this.failurePolicy = Objects.requireNonNull(failurePolicy, "failurePolicy must not be null");
        return self();
    }

    /** How long one call to the store may take before it counts as failed; default 250 ms. */
    @Override
    public B timeout(Duration timeout) {
        return super.timeout(timeout);
    }

    /** The {@code retryAfter} of a denial under {@link FailurePolicy#FAIL_CLOSED}; default 1 s. */
    public B failClosedRetryAfter(Duration retryAfter) {
        SharedStoreOptions.requirePositive("failClosedRetryAfter", retryAfter);
        this.failClosedRetryAfter = retryAfter;
        return self();
    }

    /**
     * Told of every decision, store failure and store call of every limiter bound to the store (besides each
     * limiter's own listener); must not block. Default: none.
     */
    @Override
    public B listener(RateLimitListener listener) {
        return super.listener(listener);
    }

    /**
     * Keeps up to {@code maxEntries} of the store's refusals in this process, each until the instant the store said a
     * request of its cost could pass, and refuses from them without a store call: a key over its limit then costs the
     * store one call per retry interval instead of one per request. Default 0: none.
     *
     * <p>Exact: when the store refuses a request of cost {@code c} on a key with retry-after {@code r}, every request
     * on that key of cost {@code c} or more is refused until {@code r} has passed, on this instance and every other,
     * since a refused request consumes nothing and other requests only consume more. A cached refusal answers as the
     * store would: refused, the limit, remaining 0, the retry-after and reset-after counted down from the store's, on
     * the limiter's clock; it is {@link dev.sluice.Decision#cached()} and listeners hear it as a refusal. A smaller
     * cost, or the retry instant reached, asks the store again. Permits given back here (a cancelled
     * {@link dev.sluice.Reservation}, a joint request that takes and gives back) drop the key's entry. Permits given
     * back on another instance, or counts the store loses (a flush, a failover), are not seen: this instance may then
     * refuse, until the cached instant and no longer, a request the store would admit; it never admits one the store
     * would refuse. A limiter that counts rejections ({@code countRejected}) is never cached: its refusals consume.
     *
     * <p>A joint request ({@link dev.sluice.RateLimiter#tryAcquireAll}) is refused from the cache without a store call
     * when each of its parts is; otherwise it goes to the store, whose refusals fill the cache. Bounded: at most
     * {@code maxEntries} entries across the store's limiters ({@value #OVER_LIMIT_CACHE_ENTRY_BYTES} bytes each, about,
     * with keys of 40 characters); a
     * refusal of a new key evicts the oldest entry.
     *
     * @throws IllegalArgumentException if {@code maxEntries < 0}
     */
    public B overLimitCache(int maxEntries) {
        if (maxEntries < 0) {
            throw new IllegalArgumentException("overLimitCache must be >= 0 entries, was " + maxEntries);
        }
        this.overLimitCache = maxEntries;
        return self();
    }

    /** The options set so far. */
    protected SharedStoreOptions options() {
        return new SharedStoreOptions(
                timeSource, failurePolicy, timeout(), failClosedRetryAfter, namespace(), listener(), overLimitCache);
    }
}
