package dev.sluice.spi;

import dev.sluice.RateLimitListener;
import dev.sluice.SluiceException;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * What every store's builder has, whether the store decides in exact mode ({@link SharedStoreBuilder}) or keeps the
 * counts of synchronized mode ({@link CounterStoreBuilder}): a timeout per call, how long building waits for the
 * store, a namespace, a listener. Not
 * thread-safe; setters validate at once.
 *
 * @param <B> the concrete builder, returned by every setter
 */
public abstract class StoreBuilder<B extends StoreBuilder<B>> {

    /** The default {@link #namespace(String)}. */
    public static final String DEFAULT_NAMESPACE = "sluice";
    /** The default {@link #startupTimeout(Duration)}. */
    public static final Duration DEFAULT_STARTUP_TIMEOUT = Duration.ofSeconds(10);

    private Duration timeout;
    private Duration startupTimeout = DEFAULT_STARTUP_TIMEOUT;
    private String namespace = DEFAULT_NAMESPACE;
    private RateLimitListener listener = RateLimitListener.NONE;

    /** Only the two kinds of store builder of this package extend it. */
    StoreBuilder(Duration defaultTimeout) {
        this.timeout = defaultTimeout;
    }

    @SuppressWarnings("unchecked")
    final B self() {
        return (B) this;
    }

    /**
     * How long one call to the store may take before it fails; the default is the builder's {@code DEFAULT_TIMEOUT}.
     *
     * @throws IllegalArgumentException if not positive, naming the value
     */
    public B timeout(Duration timeout) {
        this.timeout = SharedStoreOptions.requirePositive("timeout", timeout);
        return self();
    }

    /**
     * How long {@code build()} waits for the store to answer before it returns; default 10 s, zero for not at all.
     * A store built in a new process is thus connected before its first decision, instead of answering the first
     * calls by its failure policy while the connection is still being made. A store that does not answer in time is
     * built all the same (what each store then does is said on its builder) and keeps connecting in the background.
     *
     * @throws IllegalArgumentException if negative, naming the value
     */
    public B startupTimeout(Duration startupTimeout) {
        this.startupTimeout = SharedStoreOptions.requireNonNegative("startupTimeout", startupTimeout);
        return self();
    }

    /**
     * The prefix of every name the store writes, so that several applications can share one server; default
     * {@code "sluice"}. Checked by {@link SharedStoreOptions#requireNamespace}; a store that derives from it a name
     * the server must accept (a table, a collection) checks that name when it is built.
     */
    public B namespace(String namespace) {
        this.namespace = SharedStoreOptions.requireNamespace(namespace);
        return self();
    }

    /**
     * Told of what the store does (what each kind of store tells is said on its builder); must not block, and one
     * that throws changes nothing. Default: none.
     */
    public B listener(RateLimitListener listener) {
        this.listener = Objects.requireNonNull(listener, "listener must not be null");
        return self();
    }

    /** Shorthand for a {@link #listener} told only of failures. */
    public B failureListener(Consumer<? super SluiceException> onFailure) {
        return listener(RateLimitListener.ofFailures(onFailure));
    }

    /** The timeout set so far. */
    protected final Duration timeout() {
        return timeout;
    }

    /** The startup timeout set so far. */
    protected final Duration startupTimeout() {
        return startupTimeout;
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
