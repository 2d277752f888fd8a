package dev.sluice.sync;

import dev.sluice.algorithm.AlgorithmState;
import dev.sluice.internal.KeyTable;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterSnapshot;
import java.util.concurrent.CountDownLatch;
import org.jspecify.annotations.Nullable;

/**
 * One key held by one instance: {@code g}, the record as last read or written, and {@code i}, the counts taken here
 * since. Every field but the identity and {@link #ready} is guarded by this object's lock word ({@link #lock()}),
 * which is the only lock a decision takes. The limiter's {@link KeyTable} finds it by the key and hash it keeps, and
 * the lock word is its too (the superclass's fields).
 *
 * <p>A key is created before its record has been read: until {@link #loaded()} (by the one thread that reads it, see
 * {@code SynchronizedStore.takeUp}) decisions wait in {@link #awaitLoaded()}, holding no lock, and the flusher and
 * refresher leave the key alone.
 */
final class KeyState extends KeyTable.Entry {

    /*
     * The fields a decision reads or writes are declared first: HotSpot lays out a class's longs, then its booleans,
     * then its references, each in the order declared, after the superclass's key, hash and lock word. So the
     * decision's fields (view, changes, lastUsed, open) end at byte 56 of the object rather than 64, and more often
     * share one cache line. On 10,000 keys a synchronized decision is bound by its cache misses (docs/benchmarks.md,
     * "Synchronized mode"); this order gave it 3-5 % more decisions a second in paired runs.
     */

    /** The algorithm's state holding {@code g + i}: what every decision reads and updates. */
    AlgorithmState view;
    /**
     * How many times a decision or a cancel here changed {@link #view}. The counts taken here and not yet written,
     * {@code i}, are not kept apart: they are {@code view - global}, worked out by the flusher
     * ({@code SynchronizedLimiter.local}), so a decision only updates the view.
     */
    long changes;
    /** The clock time of the last request on this key here. */
    long lastUsed;

    /** Set once, right after {@link #loaded}: read without the lock, so a decision on a loaded key takes no latch. */
    private volatile boolean open;

    final SynchronizedLimiter limiter;
    final CounterKey id;

    /** The store's record as last read or written here: {@code g}. */
    CounterSnapshot global = CounterSnapshot.absent();
    /** The value of {@link #changes} when {@code view} was last known to equal {@code global}: {@code i} was empty. */
    long cleanAt;
    /** A write whose outcome is unknown (its call failed), settled by the next read of the record; or null. */
    @Nullable
    Attempt doubt;
    /** Set once, when the first read of the record has answered or failed: from then on the rounds take the key. */
    boolean loaded;

    /** Opened once, right after {@link #open} is set. */
    private final CountDownLatch ready = new CountDownLatch(1);

    KeyState(SynchronizedLimiter limiter, String key, CounterKey id, AlgorithmState view, long now) {
        super(key);
        this.limiter = limiter;
        this.id = id;
        this.view = view;
        this.lastUsed = now;
    }

    /** The first read of the record is over, answered or failed: lets waiting decisions go on. */
    void loaded() {
        lock();
        try {
            loaded = true;
        } finally {
            unlock();
        }
        open = true;
        ready.countDown();
    }

    /**
     * Waits, holding no lock, until the first read of the record is over; at most the counter store's timeout, which
     * bounds the read. An interrupt does not end the wait (the decision needs the key), but is kept for the caller.
     */
    void awaitLoaded() {
        if (open) {
            return;
        }
        boolean interrupted = false;
        while (true) {
            try {
                ready.await();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** Whether {@code i} may hold counts: a decision or a cancel changed the view since it last equalled {@code g}. */
    boolean dirty() {
        return changes != cleanAt;
    }

    /** A write that was sent: the version it expected and set, and the counts of {@code i} it carried. */
    record Attempt(long expectedVersion, long newVersion, FrameCounts written) {}
}
