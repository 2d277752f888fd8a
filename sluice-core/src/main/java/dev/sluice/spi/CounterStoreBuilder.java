package dev.sluice.spi;

import dev.sluice.RateLimitListener;
import dev.sluice.SluiceException;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * The options every {@link CounterStore}'s builder has, whatever the store; a store's builder extends this and adds
 * its own (a table, a key codec). Each store module hands one out from its entry class
 * ({@code RedisStore.counterStoreBuilder}, {@code PostgresStore.counterStoreBuilder},
 * {@code MongoStore.counterStoreBuilder}). Not thread-safe; setters validate at once.
 *
 * @param <B> the concrete builder, returned by every setter
 */
public abstract class CounterStoreBuilder<B extends CounterStoreBuilder<B>> {

    /**
     * The default {@link #timeout(Duration)}: longer than an exact-mode store's ({@link SharedStoreBuilder#DEFAULT_TIMEOUT}),
     * since a call carries up to a batch of records and only the synchronized store's background rounds wait for it.
     */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(1);

    private Duration timeout = DEFAULT_TIMEOUT;
    private String namespace = SharedStoreBuilder.DEFAULT_NAMESPACE;
    private RateLimitListener listener = RateLimitListener.NONE;

    protected CounterStoreBuilder() {
    }

    @SuppressWarnings("unchecked")
    private B self() {
        return (B) this;
    }

    /**
     * How long one call to the store (a batch of reads or writes) may take before it fails with a
     * {@link SluiceException}; default 1 s. Only the synchronized store's background rounds wait for it, never a
     * request.
     */
    public B timeout(Duration timeout) {
        this.timeout = SharedStoreOptions.requirePositive("timeout", timeout);
        return self();
    }

    /**
     * The prefix of every name the store writes, so that several applications can share one server; default
     * {@code "sluice"}. Checked as a shared store's namespace is ({@link SharedStoreOptions#requireNamespace}); a
     * store that derives a name the server must accept from it (a table, a collection) checks that name in
     * {@link #build()}.
     */
    public B namespace(String namespace) {
        this.namespace = SharedStoreOptions.requireNamespace(namespace);
        return self();
    }

    /**
     * Told of failures of the store's own work that no call reports by throwing (such as creating an index), with a
     * {@code null} limiter; calls that fail throw, and the synchronized store tells its own listener. Must not block;
     * a listener that throws changes nothing. Default: none.
     */
    public B listener(RateLimitListener listener) {
        this.listener = Objects.requireNonNull(listener, "listener must not be null");
        return self();
    }

    /** Shorthand for a {@link #listener} told only of failures. */
    public B failureListener(Consumer<? super SluiceException> onFailure) {
        Objects.requireNonNull(onFailure, "failureListener must not be null");
        return listener(RateLimitListener.ofFailures(onFailure));
    }

    /** The counter store. */
    public abstract CounterStore build();

    /** The timeout set so far. */
    protected final Duration timeout() {
        return timeout;
    }

    /** The namespace set so far. */
    protected final String namespace() {
        return namespace;
    }

    /** The listener set so far. */
    protected final RateLimitListener listener() {
        return listener;
    }
}
