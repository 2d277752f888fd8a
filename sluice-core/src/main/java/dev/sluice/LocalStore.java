package dev.sluice;

import dev.sluice.internal.LocalRounds;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.RateLimitStore;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * What the stores of synchronized and leased mode have ({@code dev.sluice.sync.SynchronizedStore},
 * {@code dev.sluice.lease.LeasedStore}): both decide in memory on every instance and share their counts through a
 * {@link CounterStore} in background rounds, one every {@link #interval()}, in calls of at most {@link #batchSize()}
 * records; both keep the algorithms whose state is counts per frame, which add up across instances. Built by a
 * {@link LocalStoreBuilder}; {@link #close()} stops the background thread.
 *
 * <p>Thread-safe.
 */
public abstract sealed class LocalStore implements RateLimitStore, AutoCloseable
        permits dev.sluice.sync.SynchronizedStore, dev.sluice.lease.LeasedStore {

    /** The default {@link #interval()}. */
    public static final Duration DEFAULT_INTERVAL = LocalStoreBuilder.DEFAULT_INTERVAL;
    /** The default {@link #batchSize()}. */
    public static final int DEFAULT_BATCH_SIZE = LocalStoreBuilder.DEFAULT_BATCH_SIZE;

    private final LocalRounds<?> rounds;

    /**
     * A store over {@code rounds}, the spine its builder made. Protected for the two permitted subclasses only (the
     * class is sealed), with a type of the module's own.
     *
     * @hidden
     */
    @SuppressWarnings({"exports", "InvalidBlockTag"}) // javadoc takes @hidden on a constructor too
    protected LocalStore(LocalRounds<?> rounds) {
        this.rounds = Objects.requireNonNull(rounds, "rounds must not be null");
    }

    /**
     * {@code FIXED_WINDOW}, {@code SLIDING_WINDOW_COUNTER} and {@code SLIDING_TAIL}: their state is counts per frame,
     * which add up across instances. {@link #bind} refuses the others with an {@link IllegalArgumentException} whose
     * message is {@link #refusal}.
     */
    @Override
    public final Set<Algorithm> algorithms() {
        return rounds.algorithms();
    }

    @Override
    public final @Nullable String refusal(Algorithm algorithm) {
        return rounds.refusal(algorithm);
    }

    /** The interval of the background round. */
    public final Duration interval() {
        return rounds.interval();
    }

    /** The most records in one call to the counter store. */
    public final int batchSize() {
        return rounds.batchSize();
    }

    /**
     * Stops the background thread (if any), waiting up to one interval for a round under way, then writes once more
     * what this instance holds; what that is, each mode's store says.
     */
    @Override
    public abstract void close();
}
