package dev.sluice.algorithm;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.internal.KeyTable;
import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * The mutable state of one key under one algorithm. Not thread-safe: a state that threads share must be used only
 * between {@link #lock()} and {@link #unlock()} on it, which is how the in-memory store makes a decision atomic per
 * key without a lock shared across keys (a state confined to one thread, or guarded by its owner's own lock, needs
 * no more). The lock is not reentrant.
 *
 * <p>Time never runs backwards inside a state: a clock stepped back neither resets a window nor refills or drains
 * a bucket. The window states decide an older {@code now} in the newest window they have seen (at its start if
 * {@code now} is before it), the buckets at the newest time they have seen, and the logs count a request at an older
 * {@code now} with their newest entry.
 */
public abstract class AlgorithmState extends KeyTable.Entry {

    /*
     * The lock, the retired flag, the optimistic read and the key are the superclass's (KeyTable.Entry), which
     * HotSpot lays out first: the first 24 bytes of every state. So a limiter keeps its states in a KeyTable and
     * finds each by its key with no object between the table and the state (the in-memory store and synchronized mode
     * do), its key bound when the state is made for it.
     */

    AlgorithmState() {}

    /**
     * A copy of this state's fields, read without the lock (so only a {@link #validate}d copy is the state), for
     * deciding on it alone; null for a state that cannot be copied cheaply (the logs), which the caller decides
     * under the lock instead. The copy's own lock is free.
     */
    public @Nullable AlgorithmState copy() {
        return null;
    }

    /**
     * A fresh state for {@code algorithm}: a key that has never been seen. A fresh state decides alike whatever the
     * time of its first request, so a store may create it before it reads the time.
     */
    public static AlgorithmState create(Algorithm algorithm, Params p) {
        switch (algorithm) {
            case FIXED_WINDOW:
                return new FixedWindowState();
            case SLIDING_LOG:
                return new SlidingLogState();
            case SLIDING_WINDOW_COUNTER:
                return new SlidingWindowCounterState();
            case SLIDING_TAIL:
                return new SlidingTailState();
            case TOKEN_BUCKET:
                return new TokenBucketState(p);
            case LEAKY_BUCKET:
                return new LeakyBucketState();
            default:
                throw new IllegalArgumentException("unknown algorithm " + algorithm);
        }
    }

    /**
     * Decides a request of {@code cost} at {@code now}. With {@code consume} the state takes the cost when the
     * request is admitted (and, with {@code countRejected}, when it is not); without, nothing changes but the
     * passage of time ({@code peek}).
     */
    public abstract Decision decide(Params p, long now, long cost, boolean consume);

    /**
     * Where a request admitted at {@code now} took its permits: a window index, a log entry's (or sub-window's)
     * expiry time, a bucket's time of the request. Call right after {@link #decide} under the same lock;
     * {@link #giveBack} takes it back.
     */
    public abstract long place(Params p, long now);

    /**
     * Returns {@code cost} permits taken at {@code place}, as far as they are still held there: a window that
     * has passed, a log entry that has expired, a token bucket that has been full (a leaky bucket that has been
     * empty) since the place holds none. Never lets the key exceed its limit.
     *
     * @return whether any permits were returned
     */
    public abstract boolean giveBack(Params p, long now, long cost, long place);

    /**
     * The earliest time from which this state decides exactly as a fresh one would, if nothing happens until
     * then; {@link Long#MIN_VALUE} if it already does. A store may drop the state from then on and lose nothing.
     */
    public abstract long expiresAt(Params p);

    /**
     * This state as numbers, for a store that keeps each key's state on a server and runs the algorithm in the
     * JVM; {@link #restore} rebuilds exactly this state from them. Call while holding the lock.
     */
    public abstract long[] snapshot();

    /**
     * The state of {@code algorithm} that {@code snapshot} (from {@link #snapshot()}) describes: it decides exactly
     * as the state that was snapshotted.
     *
     * @throws IllegalArgumentException if {@code snapshot} is not a snapshot of an {@code algorithm} state
     */
    public static AlgorithmState restore(Algorithm algorithm, long[] snapshot) {
        switch (algorithm) {
            case FIXED_WINDOW:
                return FixedWindowState.restore(snapshot);
            case SLIDING_LOG:
                return ExpiringLogState.restore(new SlidingLogState(), snapshot);
            case SLIDING_WINDOW_COUNTER:
                return ExpiringLogState.restore(new SlidingWindowCounterState(), snapshot);
            case SLIDING_TAIL:
                return SlidingTailState.restore(snapshot);
            case TOKEN_BUCKET:
                return TokenBucketState.restore(snapshot);
            case LEAKY_BUCKET:
                return LeakyBucketState.restore(snapshot);
            default:
                throw new IllegalArgumentException("unknown algorithm " + algorithm);
        }
    }

    static long[] requireLength(String what, long[] snapshot, int length) {
        if (snapshot == null || snapshot.length != length) {
            throw new IllegalArgumentException("a " + what + " snapshot has " + length + " numbers, was "
                    + (snapshot == null ? "null" : Arrays.toString(snapshot)));
        }
        return snapshot;
    }

    /**
     * {@code max(current, floorDiv(now, w))}: the index of the window of length {@code w} that holds {@code now}, or
     * {@code current} if that is later. {@code current} is {@link Long#MIN_VALUE} (none yet) or a window whose start
     * {@code current·w} is a long, as every state's window is (the states compute that start). Most requests on a key fall in the window of the request before, so
     * that case is answered without the division, which costs a decision as much as the rest of its arithmetic;
     * only when {@code now} and the window's start differ in sign (where their difference could overflow) or
     * {@code now} has left the window does it divide.
     */
    static long windowAtLeast(long current, long now, long w) {
        long start = current * w;
        if (current != Long.MIN_VALUE && (now ^ start) >= 0 && now - start < w) {
            return current;
        }
        return Math.max(current, Math.floorDiv(now, w));
    }

    static long remaining(long limit, long used) {
        return used >= limit ? 0 : limit - used;
    }
}
