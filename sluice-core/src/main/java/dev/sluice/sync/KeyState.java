package dev.sluice.sync;

import dev.sluice.algorithm.AlgorithmState;
import dev.sluice.internal.CountedKey;
import dev.sluice.internal.FrameCounts;
import dev.sluice.internal.KeyTable;
import dev.sluice.internal.Latches;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterSnapshot;
import java.util.concurrent.CountDownLatch;
import org.jspecify.annotations.Nullable;

/**
 * One key held by one instance: {@link #view}, the algorithm's state holding {@code g + i}, on which every decision
 * runs, and the bookkeeping of the flush and refresh rounds beside it: {@code g}, the record as last read or
 * written, and what they need to know to write {@code i}, the counts taken here since. The limiter's
 * {@link KeyTable} holds the view itself, so a decision finds it by its key with no object in between and never
 * reads this one; it notes what it did in the view's lock word ({@link KeyTable.Entry#markUsed}), and the rounds take
 * that into {@link #changes} and {@link #lastUsed} whenever they lock the key ({@link #lock()}). Every field but the
 * identity and {@link #ready} is guarded by the view's lock.
 *
 * <p>A key is created before its record has been read, and its view enters the limiter's table only once that read
 * is over ({@link #loaded()}, by the one thread that reads it, see {@code SynchronizedStore.takeUp}); until then
 * decisions wait in {@link #awaitLoaded()}, holding no lock, and the flusher and refresher leave the key alone.
 */
final class KeyState implements CountedKey {

    final SynchronizedLimiter limiter;
    final String key;
    final CounterKey id;
    /** The algorithm's state holding {@code g + i}, bound to {@link #key}: what every decision reads and updates. */
    final AlgorithmState view;

    /**
     * How many times the rounds found the view changed by a decision or a cancel here since they last looked. The
     * counts taken here and not yet written, {@code i}, are not kept apart: they are {@code view - global}, worked
     * out by the flusher ({@code SynchronizedLimiter.local}), so a decision only updates the view.
     */
    long changes;
    /**
     * The clock time at which a round last found the key used by a request here (or at which it was taken up): a
     * request is seen by the first round to lock the key after it, so this is at most one round late.
     */
    long lastUsed;
    /** The store's record as last read or written here: {@code g}. */
    CounterSnapshot global = CounterSnapshot.absent();
    /** The value of {@link #changes} when {@code view} was last known to equal {@code global}: {@code i} was empty. */
    long cleanAt;
    /** A write whose outcome is unknown (its call failed), settled by the next read of the record; or null. */
    @Nullable
    Attempt doubt;
    /**
     * Set once, when the first read of the record has answered or failed and the view is in the limiter's table:
     * from then on the rounds take the key ({@link #loaded()}), and a thread on it takes no latch.
     */
    private volatile boolean open;
    /** Opened once, right after {@link #open} is set. */
    private final CountDownLatch ready = new CountDownLatch(1);

    @Override
    public CounterKey id() {
        return id;
    }

    @Override
    public SynchronizedLimiter limiter() {
        return limiter;
    }

    KeyState(SynchronizedLimiter limiter, String key, CounterKey id, AlgorithmState view, long now) {
        this.limiter = limiter;
        this.key = key;
        this.id = id;
        this.view = view;
        this.lastUsed = now;
        view.bind(key);
    }

    /**
     * Takes the view's lock, which guards this key's every field, and takes in what decisions noted since a round
     * last held it: a change counts in {@link #changes}, a use sets {@link #lastUsed} to now.
     */
    void lock() {
        view.lock();
        int marks = view.takeMarks();
        if ((marks & KeyTable.Entry.CHANGED) != 0) {
            changes++;
        }
        if ((marks & KeyTable.Entry.USED) != 0) {
            lastUsed = Math.max(lastUsed, limiter.now());
        }
    }

    void unlock() {
        view.unlock();
    }

    /** Whether the key has been dropped as idle (its view retired). Call while holding the lock. */
    boolean retired() {
        return view.retired();
    }

    /**
     * The first read of the record is over, answered or failed: the view enters the limiter's table, and waiting
     * decisions go on, whatever happens (a table that cannot take another key throws, and the waiters then decide on
     * the view they hold).
     */
    void loaded() {
        try {
            limiter.publish(this);
        } finally {
            open = true;
            ready.countDown();
        }
    }

    /**
     * Whether the first read of the record is over: until then the rounds leave the key alone (it has nothing to
     * write, and a refresh's read could overtake the first read).
     */
    boolean isLoaded() {
        return open;
    }

    /**
     * Waits, holding no lock, until the first read of the record is over; at most the counter store's timeout, which
     * bounds the read. An interrupt does not end the wait (the decision needs the key), but is kept for the caller.
     */
    void awaitLoaded() {
        if (!open) {
            Latches.awaitUninterruptibly(ready);
        }
    }

    /** Whether {@code i} may hold counts: a decision or a cancel changed the view since it last equalled {@code g}. */
    boolean dirty() {
        return changes != cleanAt;
    }

    /** A write that was sent: the version it expected and set, and the counts of {@code i} it carried. */
    record Attempt(long expectedVersion, long newVersion, FrameCounts written) {}
}
