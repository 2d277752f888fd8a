package dev.sluice;

import dev.sluice.memory.InMemoryStore;
import dev.sluice.spi.Durations;
import dev.sluice.spi.RateLimitStore;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Builds a {@link RateLimiter}. Obtain one from {@link RateLimiter#builder(Algorithm)}. Not thread-safe;
 * every setter validates its argument at once and {@link #build()} validates the whole.
 */
public final class RateLimiterBuilder {

    private final Algorithm algorithm;
    private long limit;
    private @Nullable Duration window;
    private Clock clock = Clock.systemUTC();
    private boolean countRejected;
    private int buckets = LimiterConfig.DEFAULT_BUCKETS;
    private boolean bucketsSet;
    private boolean strict;
    private @Nullable RateLimitStore store;
    private RateLimitListener listener = RateLimitListener.NONE;

    private RateLimiterBuilder(Algorithm algorithm) {
        this.algorithm = Objects.requireNonNull(algorithm, "algorithm must not be null");
    }

    static RateLimiterBuilder forAlgorithm(Algorithm algorithm) {
        return new RateLimiterBuilder(algorithm);
    }

    /**
     * Permits per window: at most {@code permits} per {@code window} (for the buckets: capacity {@code permits},
     * refilled at {@code permits/window}). Required.
     *
     * @throws IllegalArgumentException if {@code permits ≤ 0}, or {@code window} is not positive or is longer than
     *                                  {@link LimiterConfig#MAX_WINDOW}
     */
    public RateLimiterBuilder limit(long permits, Duration window) {
        if (permits <= 0) {
            throw new IllegalArgumentException("limit must be > 0, was " + permits);
        }
        LimiterConfig.checkWindow(window);
        this.limit = permits;
        this.window = window;
        return this;
    }

    /**
     * The only source of time; default {@link Clock#systemUTC()}, which is read through {@link System#nanoTime()} with
     * an offset to the wall clock measured every second (see {@link LimiterConfig#clockNanos()}).
     */
    public RateLimiterBuilder clock(Clock clock) {
        this.clock = Objects.requireNonNull(clock, "clock must not be null");
        return this;
    }

    /**
     * Whether rejected requests consume their cost too (default {@code false}). For the buckets a counted
     * rejection drains the bucket down to empty, never below, so a key recovers within one window.
     */
    public RateLimiterBuilder countRejected(boolean countRejected) {
        this.countRejected = countRejected;
        return this;
    }

    /** {@link Algorithm#SLIDING_WINDOW_COUNTER} only: sub-windows per window, default 60. */
    public RateLimiterBuilder buckets(int buckets) {
        requireSlidingWindowCounter("buckets");
        if (buckets <= 0) {
            throw new IllegalArgumentException("buckets must be > 0, was " + buckets);
        }
        this.buckets = buckets;
        this.bucketsSet = true;
        return this;
    }

    /**
     * {@link Algorithm#SLIDING_WINDOW_COUNTER} only: also count the sub-window that only partly overlaps the
     * window (the harsher choice). Default {@code false}.
     */
    public RateLimiterBuilder strict(boolean strict) {
        requireSlidingWindowCounter("strict");
        this.strict = strict;
        return this;
    }

    /** Where the state lives; default a new {@link InMemoryStore}. */
    public RateLimiterBuilder store(RateLimitStore store) {
        this.store = Objects.requireNonNull(store, "store must not be null");
        return this;
    }

    /**
     * Told of this limiter's decisions, and of the failures and latency of its store calls; default none. A store's
     * own listener (set on its builder) hears every limiter of the store besides.
     */
    public RateLimiterBuilder listener(RateLimitListener listener) {
        this.listener = Objects.requireNonNull(listener, "listener must not be null");
        return this;
    }

    /** The validated configuration this builder describes. */
    public LimiterConfig config() {
        if (window == null) {
            throw new IllegalStateException("limit(permits, window) must be set before build()");
        }
        return new LimiterConfig(algorithm, limit, window, clock, countRejected, buckets, strict, listener);
    }

    /** Builds the limiter on the configured store. */
    public RateLimiter build() {
        LimiterConfig config = config();
        RateLimitStore target = store != null ? store : InMemoryStore.create();
        return Objects.requireNonNull(target.bind(config), "store returned no limiter");
    }

    private void requireSlidingWindowCounter(String option) {
        if (algorithm != Algorithm.SLIDING_WINDOW_COUNTER) {
            throw new IllegalArgumentException(option + " applies to SLIDING_WINDOW_COUNTER only, not " + algorithm);
        }
    }

    @Override
    public String toString() {
        return "RateLimiterBuilder[" + algorithm + ", limit=" + limit + "/"
                + (window == null ? null : Durations.format(window))
                + (bucketsSet ? ", buckets=" + buckets : "") + (strict ? ", strict" : "")
                + (countRejected ? ", countRejected" : "") + "]";
    }
}
