package dev.sluice.spi;

import dev.sluice.RateLimitListener;
import dev.sluice.SluiceException;
import java.time.Duration;

/**
 * The options every {@link CounterStore}'s builder has, whatever the store; a store's builder extends this and adds
 * its own (a table, a key codec). Each store module hands one out from its entry class
 * ({@code RedisStore.counterStoreBuilder}, {@code PostgresStore.counterStoreBuilder},
 * {@code MongoStore.counterStoreBuilder}). Not thread-safe; setters validate at once.
 *
 * @param <B> the concrete builder, returned by every setter
 */
public abstract class CounterStoreBuilder<B extends CounterStoreBuilder<B>> extends StoreBuilder<B> {

    /**
     * The default {@link #timeout(Duration)}: longer than an exact-mode store's ({@link SharedStoreBuilder#DEFAULT_TIMEOUT}),
     * since a call carries up to a batch of records and mostly the synchronized store's background rounds wait for it.
     */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(1);

    /** Starts with every option at its default; for a store's own builder to call. */
    protected CounterStoreBuilder() {
        super(DEFAULT_TIMEOUT);
    }

    /**
     * How long one call to the store (a batch of reads or writes) may take before it fails with a
     * {@link SluiceException}; default 1 s. The synchronized store's background rounds wait for it; so do the first
     * requests on a key an instance takes up, whose record is read (one key) before they are decided: keep it short
     * where requests must not wait long in an outage.
     */
    @Override
    public B timeout(Duration timeout) {
        return super.timeout(timeout);
    }

    /**
     * Told of the time of every call and of the failures of the store's own work that no call reports by throwing
     * (such as creating an index), with a {@code null} limiter; calls that fail throw, and the synchronized store
     * tells its own listener. Must not block; a listener that throws changes nothing. Default: none.
     */
    @Override
    public B listener(RateLimitListener listener) {
        return super.listener(listener);
    }

    /** The counter store. */
    public abstract CounterStore build();
}
