package dev.sluice.internal;

import dev.sluice.RateLimitListener;
import dev.sluice.RateLimiter;
import dev.sluice.SluiceException;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterSnapshot;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterWrite;
import dev.sluice.spi.Listeners;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;

/**
 * The calls of synchronized and leased mode to their {@link CounterStore}: each answer checked (one record per key,
 * one result per write), each call counted, timed and told to the store's listener (and to the limiter's, for a call
 * made on a limiter's request), each failure counted, told and wrapped in a {@link SluiceException}. Remembers whether
 * the last call failed.
 *
 * <p>Thread-safe.
 */
public final class CounterStoreCalls {

    private final CounterStore counterStore;
    private final RateLimitListener listener;
    private final LongAdder calls = new LongAdder();
    private final LongAdder failures = new LongAdder();
    private volatile boolean failing;

    /** Calls to {@code counterStore}, told to {@code listener}, the listener of the store that makes them. */
    public CounterStoreCalls(CounterStore counterStore, RateLimitListener listener) {
        this.counterStore = Objects.requireNonNull(counterStore, "counterStore must not be null");
        this.listener = Objects.requireNonNull(listener, "listener must not be null");
    }

    /**
     * Reads the records of {@code ids}, in their order; on failure the message says "reading n records".
     *
     * @param limiter the limiter whose request makes the call, whose listener is told too; null for the store's own
     * @throws SluiceException if the call failed, or answered other than one record per key
     */
    public List<CounterSnapshot> load(List<CounterKey> ids, @Nullable RateLimiter limiter) {
        return load(ids, limiter, "reading " + ids.size() + " records");
    }

    /**
     * Reads the records of {@code ids}, in their order.
     *
     * @param limiter the limiter whose request makes the call, whose listener is told too; null for the store's own
     * @param what    what the call does, for the message of its failure
     * @throws SluiceException if the call failed, or answered other than one record per key
     */
    public List<CounterSnapshot> load(List<CounterKey> ids, @Nullable RateLimiter limiter, String what) {
        long start = System.nanoTime();
        calls.increment();
        try {
            List<CounterSnapshot> s = counterStore.load(ids);
            if (s == null || s.size() != ids.size() || hasNull(s)) {
                throw new SluiceException("the counter store answered "
                        + (s == null ? "nothing" : s.size() + " records") + " for " + ids.size()
                        + (ids.size() == 1 ? " key" : " keys"));
            }
            succeeded(start, limiter);
            return s;
        } catch (RuntimeException e) {
            throw failed(start, limiter, what, e);
        }
    }

    /**
     * Compare-and-sets {@code writes}: whether each was applied, in their order.
     *
     * @param limiter the limiter whose request makes the call, whose listener is told too; null for the store's own
     * @throws SluiceException if the call failed (each write may or may not have been applied), or answered other than
     *                         one result per write
     */
    public boolean[] compareAndSet(List<CounterWrite> writes, @Nullable RateLimiter limiter) {
        long start = System.nanoTime();
        calls.increment();
        try {
            boolean[] applied = counterStore.compareAndSet(writes);
            if (applied == null || applied.length != writes.size()) {
                throw new SluiceException("the counter store answered "
                        + (applied == null ? "nothing" : applied.length + " results") + " for " + writes.size()
                        + " writes");
            }
            succeeded(start, limiter);
            return applied;
        } catch (RuntimeException e) {
            throw failed(start, limiter, "writing " + writes.size() + " records", e);
        }
    }

    /** Whether the last call failed. */
    public boolean failing() {
        return failing;
    }

    /** The calls made so far. */
    public long calls() {
        return calls.sum();
    }

    /** The failures so far: of calls, and outside calls. */
    public long failures() {
        return failures.sum();
    }

    /**
     * Counts {@code failure}, one that happened outside a call (a background round that threw), and tells the store's
     * listener of it. The counter store does not count as failing for it: only a failed call says so.
     */
    public void failedOutsideCalls(SluiceException failure) {
        failures.increment();
        Listeners.failure(listener, null, failure);
    }

    /** {@code e} itself if it is a {@link SluiceException}, else one whose message is {@code message: e}. */
    public static SluiceException wrap(String message, RuntimeException e) {
        return e instanceof SluiceException ? (SluiceException) e : new SluiceException(message + ": " + e, e);
    }

    private void succeeded(long start, @Nullable RateLimiter limiter) {
        failing = false;
        long nanos = System.nanoTime() - start;
        Listeners.call(listener, limiter, nanos);
        if (limiter != null) {
            Listeners.call(limiter.config().listener(), limiter, nanos);
        }
    }

    private SluiceException failed(long start, @Nullable RateLimiter limiter, String what, RuntimeException e) {
        failing = true;
        failures.increment();
        SluiceException failure = wrap("counter store failed " + what, e);
        long nanos = System.nanoTime() - start;
        Listeners.call(listener, limiter, nanos);
        Listeners.failure(listener, limiter, failure);
        if (limiter != null) {
            Listeners.call(limiter.config().listener(), limiter, nanos);
            Listeners.failure(limiter.config().listener(), limiter, failure);
        }
        return failure;
    }

    private static boolean hasNull(List<CounterSnapshot> snapshots) {
        for (CounterSnapshot s : snapshots) {
            if (s == null) {
                return true;
            }
        }
        return false;
    }
}
