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

    private TimeSource timeSource = TimeSource.STORE;
    private FailurePolicy failurePolicy = FailurePolicy.FAIL_OPEN;
    private Duration failClosedRetryAfter = DEFAULT_FAIL_CLOSED_RETRY_AFTER;

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

    /** The options set so far. */
    protected SharedStoreOptions options() {
        return new SharedStoreOptions(
                timeSource, failurePolicy, timeout(), failClosedRetryAfter, namespace(), listener());
    }
}
