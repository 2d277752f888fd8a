package dev.sluice.algorithm;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.concurrent.locks.LockSupport;
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
public abstract class AlgorithmState {

    /*
     * Why a lock word and not synchronized: a decision holds the key's lock for a few dozen nanoseconds of
     * arithmetic, and an uncontended monitor costs two atomic instructions (enter and exit, about 19 ns on the
     * machine of docs/benchmarks.md), as much as the decision itself. Here taking the lock is one
     * compare-and-set of an int and dropping it a plain store with release semantics. A thread that finds
     * the lock held tries once more after a pause, then parks for the shortest time the system gives (tens of
     * microseconds on Linux) before it tries again. Why not spin longer: on a hot key the waiter takes the lock
     * the moment it is let go, so the key's cache line, lock word and fields, moves between the cores on every
     * decision. Between cores far apart, two threads admitted 10-14 million a second together, where one thread
     * alone admits 26-28 (two threads on cores near each other: 30-36), and four threads (more than the cores)
     * as few as 7 million. A parked waiter leaves the holder to decide on a line that stays in its core: 23-27
     * million a second on two and four threads, steadily, and no core burnt on spinning. The price is that
     * waiter's latency, tens of microseconds, only while another thread holds the same key (Resilience4j's
     * limiter parks the same way).
     *
     *   word & HELD              a thread is deciding
     *   word & RETIRED           dropped by its store; whoever takes the lock must look the key up again
     *   word & DENYING           the last decision under the lock refused (a hint for the optimistic read)
     *   word >>> 3               a version, one more at every release of the lock
     *
     * The word fits the 4 bytes between the object header and the first long field, where the retired
     * flag used to sit, so a state is no bigger than before.
     *
     * Optimistic reads (a seqlock, as StampedLock's): a refusal that changes nothing (countRejected off) and a
     * peek need not write, so they need not take the lock and contend for its cache line with every other caller
     * of a hot key. A reader takes the word as a stamp (free, not retired), copies the fields, reads the time, and
     * validates that the word is still the stamp; every writer holds the lock while it writes and bumps the
     * version when it lets go, so a valid stamp means the copy is the state as it was at one instant, between
     * the two reads of the word, when the time was read too. It decides on the copy. Example: a flood on a key of
     * a fixed window, limit 100, already at 100: each refusal is two reads of the word and two of the fields, no
     * write, so two threads refusing on the same key no longer take turns on one lock.
     */
    private static final int HELD = 1;
    private static final int RETIRED = 2;
    private static final int DENYING = 4;
    private static final int VERSION = 8;

    /** What {@link #optimisticStamp(boolean)} answers when an optimistic read cannot start. */
    public static final int NO_STAMP = HELD;

    private static final VarHandle WORD;

    static {
        try {
            WORD = MethodHandles.lookup().findVarHandle(AlgorithmState.class, "word", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** HELD and RETIRED bits; changed only by a compare-and-set to 'HELD' or by the holder. */
    private int word;

    AlgorithmState() {}

    /** Takes this state's lock, waiting (a pause, then parking) while another thread holds it. */
    public final void lock() {
        int w = word; // a plain read: the compare-and-set checks it
        if ((w & HELD) != 0 || !WORD.compareAndSet(this, w, w | HELD)) {
            lockContended();
        }
    }

    private void lockContended() {
        for (boolean paused = false; ; paused = true) {
            int w = (int) WORD.getVolatile(this);
            if ((w & HELD) == 0 && WORD.compareAndSet(this, w, w | HELD)) {
                return;
            }
            if (paused) {
                LockSupport.parkNanos(1); // see "Why a lock word" above
            } else {
                Thread.onSpinWait();
            }
        }
    }

    /**
     * Releases this state's lock; everything written while holding it is visible to the next holder, and an
     * optimistic read that overlapped the hold fails its {@link #validate}.
     */
    public final void unlock() {
        WORD.setRelease(this, (word & ~HELD) + VERSION);
    }

    /**
     * Notes whether the decision just made under the lock refused: the hint an optimistic read goes by
     * ({@link #optimisticStamp(boolean)}). Call while holding the lock.
     */
    public final void noteRefused(boolean refused) {
        word = refused ? word | DENYING : word & ~DENYING;
    }

    /**
     * A stamp to read this state without its lock ({@link #copy()}, then {@link #validate}), or {@link #NO_STAMP}
     * if a thread holds the lock, the state is retired, or {@code onlyIfRefusing} and the last decision under the
     * lock did not refuse (a key that admits would only read in vain before taking the lock).
     */
    public final int optimisticStamp(boolean onlyIfRefusing) {
        int w = (int) WORD.getAcquire(this);
        if ((w & (HELD | RETIRED)) != 0 || (onlyIfRefusing && (w & DENYING) == 0)) {
            return NO_STAMP;
        }
        return w;
    }

    /**
     * Whether nothing was written to this state since {@code stamp} was taken: then what was read in between is
     * the state as it was at one instant.
     */
    public final boolean validate(int stamp) {
        VarHandle.acquireFence();
        return stamp != NO_STAMP && (int) WORD.getVolatile(this) == stamp;
    }

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

    /** Whether the owning store has dropped this state. Call while holding the lock. */
    public final boolean isRetired() {
        return (word & RETIRED) != 0;
    }

    /** Marks this state as dropped by its store; later holders must look the key up again. Call while holding the lock. */
    public final void retire() {
        word |= RETIRED;
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
