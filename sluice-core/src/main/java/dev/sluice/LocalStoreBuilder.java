package dev.sluice;

import dev.sluice.internal.LocalLimiter;
import dev.sluice.internal.LocalRounds;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.SharedStoreOptions;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * What the builders of synchronized and leased mode have ({@code dev.sluice.sync.SynchronizedStore.Builder},
 * {@code dev.sluice.lease.LeasedStore.Builder}): both modes decide in memory on every instance and share their counts
 * through a {@link CounterStore} in background rounds, one every {@link #interval(Duration) interval}. Not
 * thread-safe; setters validate at once.
 *
 * @param <B> the concrete builder, returned by every setter
 * @param <S> the store it builds
 */
public abstract sealed class LocalStoreBuilder<B extends LocalStoreBuilder<B, S>, S extends LocalStore>
        permits dev.sluice.sync.SynchronizedStore.Builder, dev.sluice.lease.LeasedStore.Builder {

    /** The default {@link #interval(Duration)}. */
    public static final Duration DEFAULT_INTERVAL = Duration.ofMillis(100);
    /** The default {@link #batchSize(int)}. */
    public static final int DEFAULT_BATCH_SIZE = 500;

    private final CounterStore counterStore;
    private Duration interval = DEFAULT_INTERVAL;
    private int batchSize = DEFAULT_BATCH_SIZE;
    private @Nullable Duration idleTimeout;
    private RateLimitListener listener = RateLimitListener.NONE;
    private LongSupplier versions = () -> ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE);
    private boolean manualRounds;

    /** For the two builders only. */
    protected LocalStoreBuilder(CounterStore counterStore) {
        this.counterStore = Objects.requireNonNull(counterStore, "counterStore must not be null");
    }

    @SuppressWarnings("unchecked")
    private B self() {
        return (B) this;
    }

    /**
     * How often the background round runs; default 100 ms. What a round does is said on each mode's builder. The
     * shorter, the closer the instances keep to the limit together, and the more round trips.
     *
     * @throws IllegalArgumentException if not positive, naming the value
     */
    public B interval(Duration interval) {
        this.interval = SharedStoreOptions.requirePositive("interval", interval);
        return self();
    }

    /**
     * The most records in one call (one round trip) to the counter store; default 500. A call carries the keys of one
     * limiter only, so a round over {@code n} keys of one limiter makes {@code ceil(n / batchSize)} calls of each kind.
     *
     * @throws IllegalArgumentException if not positive, naming the value
     */
    public B batchSize(int batchSize) {
        if (batchSize <= 0) {
            throw new IllegalArgumentException("batchSize must be > 0, was " + batchSize);
        }
        this.batchSize = batchSize;
        return self();
    }

    /**
     * How long a key must go without a request here before a round may drop it from memory; default each limiter's
     * window. What else a key must satisfy to be dropped is said on each mode's builder.
     *
     * @throws IllegalArgumentException if not positive, naming the value
     */
    public B idleTimeout(Duration timeout) {
        this.idleTimeout = SharedStoreOptions.requirePositive("idleTimeout", timeout);
        return self();
    }

    /**
     * Told of every decision of the store's limiters (each limiter's own listener hears its own besides), and of every
     * call to the counter store: how long it took, and its failure; the limiter of a round's call is {@code null},
     * since rounds are the store's own work. Must not block; a listener that throws changes no decision and no count.
     * Default: none.
     */
    public B listener(RateLimitListener listener) {
        this.listener = Objects.requireNonNull(listener, "listener must not be null");
        return self();
    }

    /** Shorthand for a {@link #listener} told only of failed calls to the counter store, e.g. to log them. */
    public B failureListener(Consumer<? super SluiceException> listener) {
        Objects.requireNonNull(listener, "failureListener must not be null");
        return listener(RateLimitListener.ofFailures(listener));
    }

    /**
     * No background thread: the application (or a test) runs the rounds itself, with the methods each store names.
     */
    public B manualRounds() {
        this.manualRounds = true;
        return self();
    }

    /**
     * No background thread: the application (or a test) runs the rounds itself.
     *
     * @deprecated use {@link #manualRounds()}
     */
    @Deprecated
    @SuppressWarnings("InlineMeSuggester") // core has no dependency for @InlineMe
    public B manualSync() {
        return manualRounds();
    }

    /** The store; starts its background thread unless {@link #manualRounds()}. */
    public abstract S build();

    /**
     * The spine of the store of {@code mode} with the settings so far. Protected for the two permitted subclasses
     * only (the class is sealed), with a type of the module's own.
     *
     * @hidden
     */
    @SuppressWarnings({"exports", "InvalidBlockTag"}) // javadoc takes @hidden on a method too
    protected final <L extends LocalLimiter<?>> LocalRounds<L> rounds(String mode) {
        return new LocalRounds<>(
                mode, counterStore, interval, batchSize, idleTimeout, listener, versions, manualRounds);
    }

    /** Where new versions come from; default random. For the builders' test hooks. */
    protected final B withVersions(LongSupplier versions) {
        this.versions = Objects.requireNonNull(versions, "versions must not be null");
        return self();
    }
}
