package dev.sluice.spi;

import java.time.Duration;
import java.util.Objects;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * One client of a store and the two kinds of store it can make: an exact-mode {@link RateLimitStore} and the
 * {@link CounterStore} of synchronized and leased mode. A {@link StoreProvider} opens one from a URI (and the
 * connection then closes its client); a store's entry class wraps an application's own client in one
 * ({@code RedisStore.connection}, {@code PostgresStore.connection}, {@code MongoStore.connection}; the application
 * then closes its client). {@code dev.sluice.assembly.StoreAssembly} builds the store of a mode from it.
 */
public interface StoreConnection extends AutoCloseable {

    /**
     * The exact-mode store, each call bounded by {@code timeout}, or the store's own default
     * ({@link SharedStoreBuilder#DEFAULT_TIMEOUT}) when null.
     */
    RateLimitStore exactStore(@Nullable Duration timeout);

    /**
     * The exact-mode store, each call bounded by {@code timeout} (the store's default when null), with an over-limit
     * cache of {@code overLimitCache} entries ({@link SharedStoreBuilder#overLimitCache(int)}; 0 for none). Default:
     * {@link #exactStore(Duration)}, for a connection whose store has no such option, which refuses any other than 0.
     *
     * @throws IllegalArgumentException if {@code overLimitCache} is negative, or positive for a store without one
     */
    default RateLimitStore exactStore(@Nullable Duration timeout, int overLimitCache) {
        if (overLimitCache != 0) {
            throw new IllegalArgumentException(
                    "this store keeps no over-limit cache, was asked for " + overLimitCache + " entries");
        }
        return exactStore(timeout);
    }

    /**
     * A builder of the counter store of synchronized and leased mode; null for a store that keeps its counts in this
     * process only (the in-memory store), which therefore serves exact mode only.
     */
    @Nullable
    CounterStoreBuilder<?> counterStoreBuilder();

    /** Closes what this connection opened; a client the application gave stays open. */
    @Override
    void close();

    /**
     * A connection on a shared store's client.
     *
     * @param exactStore the exact-mode store with a timeout, or the store's default for null
     * @param counters   a new builder of the store's counter store
     * @param closer     closes the client, or does nothing for an application's own client
     */
    static StoreConnection of(
            Function<@Nullable Duration, RateLimitStore> exactStore,
            Supplier<? extends CounterStoreBuilder<?>> counters,
            AutoCloseable closer) {
        Objects.requireNonNull(exactStore, "exactStore must not be null");
        return of((timeout, cache) -> exactStore.apply(timeout), counters, closer, false);
    }

    /**
     * A connection on a shared store's client whose exact-mode store takes an over-limit cache.
     *
     * @param exactStore the exact-mode store with a timeout (or the store's default for null) and an over-limit cache
     *                   of the entries given (0: none)
     * @param counters   a new builder of the store's counter store
     * @param closer     closes the client, or does nothing for an application's own client
     */
    static StoreConnection of(
            BiFunction<@Nullable Duration, Integer, RateLimitStore> exactStore,
            Supplier<? extends CounterStoreBuilder<?>> counters,
            AutoCloseable closer) {
        return of(exactStore, counters, closer, true);
    }

    private static StoreConnection of(
            BiFunction<@Nullable Duration, Integer, RateLimitStore> exactStore,
            Supplier<? extends CounterStoreBuilder<?>> counters,
            AutoCloseable closer,
            boolean caches) {
        Objects.requireNonNull(exactStore, "exactStore must not be null");
        Objects.requireNonNull(counters, "counters must not be null");
        Objects.requireNonNull(closer, "closer must not be null");
        return new StoreConnection() {
            @Override
            public RateLimitStore exactStore(@Nullable Duration timeout) {
                return exactStore.apply(timeout, 0);
            }

            @Override
            public RateLimitStore exactStore(@Nullable Duration timeout, int overLimitCache) {
                if (overLimitCache < 0) {
                    throw new IllegalArgumentException("overLimitCache must be >= 0 entries, was " + overLimitCache);
                }
                if (!caches) {
                    return StoreConnection.super.exactStore(timeout, overLimitCache);
                }
                return exactStore.apply(timeout, overLimitCache);
            }

            @Override
            public CounterStoreBuilder<?> counterStoreBuilder() {
                return counters.get();
            }

            @Override
            public void close() {
                try {
                    closer.close();
                } catch (RuntimeException e) {
                    throw e;
                } catch (Exception e) {
                    throw new IllegalStateException("closing the store's client failed: " + e, e);
                }
            }
        };
    }
}
