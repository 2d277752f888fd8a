package dev.sluice.spi;

import dev.sluice.FailurePolicy;
import dev.sluice.RateLimitListener;
import dev.sluice.SluiceException;
import dev.sluice.TimeSource;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * The options every shared store's builder has; a store's builder extends this and adds its own (a client, a
 * table name). Not thread-safe; setters validate at once.
 *
 * @param <B> the concrete builder, returned by every setter
 */
public abstract class SharedStoreBuilder<B extends SharedStoreBuilder<B>> {

    /** The default {@link #timeout(Duration)}. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofMillis(250);
    /** The default {@link #failClosedRetryAfter(Duration)}. */
    public static final Duration DEFAULT_FAIL_CLOSED_RETRY_AFTER = Duration.ofSeconds(1);
    /** The default {@link #namespace(String)}. */
    public static final String DEFAULT_NAMESPACE = "sluice";

    private TimeSource timeSource = TimeSource.STORE;
    private FailurePolicy failurePolicy = FailurePolicy.FAIL_OPEN;
    private Duration timeout = DEFAULT_TIMEOUT;
    private Duration failClosedRetryAfter = DEFAULT_FAIL_CLOSED_RETRY_AFTER;
    private String namespace = DEFAULT_NAMESPACE;
    private RateLimitListener listener = RateLimitListener.NONE;

    /** Starts with every option at its default; for a store's own builder to call. */
    protected SharedStoreBuilder() {
    }

    @SuppressWarnings("unchecked")
    private B self() {
        return (B) this;
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
    public B timeout(Duration timeout) {
        SharedStoreOptions.requirePositive("timeout", timeout);
        this.timeout = timeout;
        return self();
    }

    /** The {@code retryAfter} of a denial under {@link FailurePolicy#FAIL_CLOSED}; default 1 s. */
    public B failClosedRetryAfter(Duration retryAfter) {
        SharedStoreOptions.requirePositive("failClosedRetryAfter", retryAfter);
        this.failClosedRetryAfter = retryAfter;
        return self();
    }

    /**
     * The prefix of every name the store writes; default {@code "sluice"}. Checked by
     * {@link SharedStoreOptions#requireNamespace}.
     */
    public B namespace(String namespace) {
        this.namespace = SharedStoreOptions.requireNamespace(namespace);
        return self();
    }

    /**
     * Told of every decision, store failure and store call of every limiter bound to the store (besides each
     * limiter's own listener); must not block. Default: none.
     */
    public B listener(RateLimitListener listener) {
        this.listener = Objects.requireNonNull(listener, "listener must not be null");
        return self();
    }

    /** Shorthand for a {@link #listener} told only of store failures. */
    public B failureListener(Consumer<? super SluiceException> onFailure) {
        return listener(RateLimitListener.ofFailures(onFailure));
    }

    /** The options set so far. */
    protected SharedStoreOptions options() {
        return new SharedStoreOptions(timeSource, failurePolicy, timeout, failClosedRetryAfter, namespace,
                listener);
    }
}
