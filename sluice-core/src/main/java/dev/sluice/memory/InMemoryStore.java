package dev.sluice.memory;

import dev.sluice.LimiterConfig;
import dev.sluice.RateLimiter;
import dev.sluice.spi.Durations;
import dev.sluice.spi.RateLimitStore;
import java.time.Duration;
import java.util.Objects;

/**
 * The default store: state in this JVM's heap, one entry per active key.
 *
 * <ul>
 *   <li><b>Atomic per key, no global lock.</b> Each key's state carries its own lock; keys never contend.</li>
 *   <li><b>Idle keys are evicted</b> once their state has become indistinguishable from a fresh one (a window
 *       that has passed, a bucket that has refilled) and has stayed so for {@link Builder#keepIdleKeys(Duration)}
 *       (default {@value #DEFAULT_KEEP_IDLE_MILLIS} ms), so eviction never changes a decision, a key that comes
 *       back within that time finds its state instead of allocating a new one, and memory follows the keys
 *       active within the last window or two plus that time. Eviction is amortized over requests; nothing runs in
 *       the background.</li>
 *   <li><b>A bound on keys</b> ({@link Builder#maximumKeys(int)}): when it is reached, idle keys are evicted first
 *       (at once, however recently they became idle);
 *       if every key is still live, a request for a <em>new</em> key is denied (with {@code retryAfter} until the
 *       earliest live key expires, and {@code remaining} 0) rather than evicting a live key, which would let it
 *       pass its limit again; a {@code peek} of a new key answers the same. Keys already held keep being decided
 *       normally.</li>
 * </ul>
 *
 * Each limiter bound to this store has its own key space and its own bound.
 */
public final class InMemoryStore implements RateLimitStore {

    /** The default of {@link Builder#keepIdleKeys(Duration)}, in milliseconds. */
    public static final long DEFAULT_KEEP_IDLE_MILLIS = 1000;

    private final int maximumKeys;
    private final long keepIdleNanos;

    private InMemoryStore(int maximumKeys, long keepIdleNanos) {
        this.maximumKeys = maximumKeys;
        this.keepIdleNanos = keepIdleNanos;
    }

    /** A store with no bound on keys (idle keys are still evicted). */
    public static InMemoryStore create() {
        return new InMemoryStore(Integer.MAX_VALUE, DEFAULT_KEEP_IDLE_MILLIS * 1_000_000L);
    }

    /** A builder to set the bound on keys. */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public RateLimiter bind(LimiterConfig config) {
        return new InMemoryRateLimiter(config, maximumKeys, keepIdleNanos);
    }

    /** The bound on keys per limiter. */
    public int maximumKeys() {
        return maximumKeys;
    }

    /** How long an idle key's state is kept before it is evicted ({@link Builder#keepIdleKeys(Duration)}). */
    public Duration keepIdleKeys() {
        return Duration.ofNanos(keepIdleNanos);
    }

    @Override
    public String toString() {
        return "InMemoryStore[maximumKeys=" + maximumKeys + ", keepIdleKeys=" + keepIdleKeys() + "]";
    }

    /** Builds an {@link InMemoryStore}. */
    public static final class Builder {
        private int maximumKeys = Integer.MAX_VALUE;
        private long keepIdleNanos = DEFAULT_KEEP_IDLE_MILLIS * 1_000_000L;

        private Builder() {}

        /** The most keys one limiter holds at once; default unbounded. */
        public Builder maximumKeys(int maximumKeys) {
            if (maximumKeys <= 0) {
                throw new IllegalArgumentException("maximumKeys must be > 0, was " + maximumKeys);
            }
            this.maximumKeys = maximumKeys;
            return this;
        }

        /**
         * How long a key's state is kept once it is idle (decides as a fresh state would) before it is evicted;
         * default {@value #DEFAULT_KEEP_IDLE_MILLIS} ms. A key that comes back within this time decides on its state
         * as on a fresh one, without allocating; longer holds more idle keys. {@link Duration#ZERO} evicts a key as
         * soon as it is idle. At the {@link #maximumKeys(int) bound on keys} idle keys are evicted at once.
         *
         * @throws IllegalArgumentException if negative or more than a day
         */
        public Builder keepIdleKeys(Duration keep) {
            Objects.requireNonNull(keep, "keep must not be null");
            if (keep.isNegative() || keep.compareTo(Duration.ofDays(1)) > 0) {
                throw new IllegalArgumentException(
                        "keepIdleKeys must be between 0 and 1 day, was " + Durations.format(keep));
            }
            this.keepIdleNanos = keep.toNanos();
            return this;
        }

        /** A new store with these settings; each limiter built on it keeps its own keys. */
        public InMemoryStore build() {
            return new InMemoryStore(maximumKeys, keepIdleNanos);
        }
    }
}
