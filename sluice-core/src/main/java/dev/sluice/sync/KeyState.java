package dev.sluice.sync;

import dev.sluice.algorithm.AlgorithmState;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterSnapshot;
import org.jspecify.annotations.Nullable;

/**
 * One key held by one instance: {@code g}, the record as last read or written, and {@code i}, the counts taken here
 * since. Every field but the identity is guarded by this object's monitor, which is the only lock a decision takes.
 */
final class KeyState {

    final SynchronizedLimiter limiter;
    final String key;
    final CounterKey id;

    /** The algorithm's state holding {@code g + i}: what every decision reads and updates. */
    AlgorithmState view;
    /** The store's record as last read or written here: {@code g}. */
    CounterSnapshot global = CounterSnapshot.absent();
    /** Counts taken here and not yet written: {@code i}. Negative where a cancel gave back flushed permits. */
    final FrameCounts pending = new FrameCounts();
    /** A write whose outcome is unknown (its call failed), settled by the next read of the record; or null. */
    @Nullable
    Attempt doubt;
    /** The clock time of the last request on this key here. */
    long lastUsed;
    /** Set once, when the key has been dropped from its limiter's map. */
    boolean retired;

    KeyState(SynchronizedLimiter limiter, String key, CounterKey id, AlgorithmState view, long now) {
        this.limiter = limiter;
        this.key = key;
        this.id = id;
        this.view = view;
        this.lastUsed = now;
    }

    /** A write that was sent: the version it expected and set, and the counts of {@code i} it carried. */
    record Attempt(long expectedVersion, long newVersion, FrameCounts written) {}
}
