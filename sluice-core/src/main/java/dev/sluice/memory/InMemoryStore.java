package dev.sluice.memory;

import dev.sluice.LimiterConfig;
import dev.sluice.RateLimiter;
import dev.sluice.spi.RateLimitStore;

/**
 * The default store: state in this JVM's heap, one entry per active key.
 *
 * <ul>
 *   <li><b>Atomic per key, no global lock.</b> Each key's state carries its own lock; keys never contend.</li>
 *   <li><b>Idle keys are evicted</b> once their state has become indistinguishable from a fresh one (a window
 *       that has passed, a bucket that has refilled), so eviction never changes a decision and memory follows the
 *       keys active within the last window or two. Eviction is amortized over requests; nothing runs in the
 *       background.</li>
 *   <li><b>A bound on keys</b> ({@link Builder#maximumKeys(int)}): when it is reached, idle keys are evicted first;
 *       if every key is still live, a request for a <em>new</em> key is denied (with {@code retryAfter} until the
 *       earliest live key expires, and {@code remaining} 0) rather than evicting a live key, which would let it
 *       pass its limit again; a {@code peek} of a new key answers the same. Keys already held keep being decided
 *       normally.</li>
 * </ul>
 *
 * Each limiter bound to this store has its own key space and its own bound.
 */
public final class InMemoryStore implements RateLimitStore {

    private final int maximumKeys;

    private InMemoryStore(int maximumKeys) {
        this.maximumKeys = maximumKeys;
    }

    /** A store with no bound on keys (idle keys are still evicted). */
    public static InMemoryStore create() {
        return new InMemoryStore(Integer.MAX_VALUE);
    }

    /** A builder to set the bound on keys. */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public RateLimiter bind(LimiterConfig config) {
        return new InMemoryRateLimiter(config, maximumKeys);
    }

    /** The bound on keys per limiter. */
    public int maximumKeys() {
        return maximumKeys;
    }

    @Override
    public String toString() {
        return "InMemoryStore[maximumKeys=" + maximumKeys + "]";
    }

    /** Builds an {@link InMemoryStore}. */
    public static final class Builder {
        private int maximumKeys = Integer.MAX_VALUE;

        private Builder() {}

        /** The most keys one limiter holds at once; default unbounded. */
        public Builder maximumKeys(int maximumKeys) {
            if (maximumKeys <= 0) {
                throw new IllegalArgumentException("maximumKeys must be > 0, was " + maximumKeys);
            }
            this.maximumKeys = maximumKeys;
            return this;
        }

        /** A new store with these settings; each limiter built on it keeps its own keys. */
        public InMemoryStore build() {
            return new InMemoryStore(maximumKeys);
        }
    }
}
