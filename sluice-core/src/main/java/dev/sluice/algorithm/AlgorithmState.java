package dev.sluice.algorithm;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The mutable state of one key under one algorithm. Not thread-safe: every other method must be called between
 * {@link #lock()} and {@link #unlock()} on this state, which is how a store makes a decision atomic per key
 * without a lock shared across keys. The lock is not reentrant.
 *
 * <p>Time never runs backwards inside a state: a {@code now} older than what the state has already seen is
 * treated as that newest time, so a clock stepped back neither resets a window nor refills a bucket.
 */
public abstract class AlgorithmState {

    /*
     * Why a lock word and not synchronized: a decision holds the key's lock for a few dozen nanoseconds of
     * arithmetic, and an uncontended monitor costs two atomic instructions (enter and exit, about 19 ns on the
     * machine of docs/benchmarks.md), as much as the decision itself. Here taking the lock is one
     * compare-and-set of an int and dropping it a plain store with release semantics. A thread that finds
     * the lock held spins briefly (the holder is almost always running and about to finish), then yields so
     * that a holder descheduled mid-decision gets the core back.
     *
     *   word = 0                 free
     *   word = HELD              a thread is deciding
     *   word = RETIRED [| HELD]  dropped by its store; whoever takes the lock must look the key up again
     *
     * The word fits the 4 bytes between the object header and the first long field, where the retired
     * flag used to sit, so a state is no bigger than before.
     */
    private static final int HELD = 1;
    private static final int RETIRED = 2;
    private static final int SPINS = 128;
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

    AlgorithmState() {
    }

    /** Takes this state's lock, waiting (spinning, then yielding) while another thread holds it. */
    public final void lock() {
        if (!WORD.compareAndSet(this, 0, HELD)) {
            lockContended();
        }
    }

    private void lockContended() {
        for (int spins = 0; ; spins++) {
            int w = (int) WORD.getVolatile(this);
            if ((w & HELD) == 0 && WORD.compareAndSet(this, w, w | HELD)) {
                return;
            }
            if (spins < SPINS) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
        }
    }

    /** Releases this state's lock; everything written while holding it is visible to the next holder. */
    public final void unlock() {
        WORD.setRelease(this, word & ~HELD);
    }

    /** A fresh state for {@code algorithm}, as a key that has never been seen is at {@code now}. */
    public static AlgorithmState create(Algorithm algorithm, Params p, long now) {
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
                return new TokenBucketState(p, now);
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
     * Where a request admitted at {@code now} took its permits: a window or sub-window index, a log entry's
     * expiry time. Call right after {@link #decide} under the same lock; {@link #giveBack} takes it back.
     */
    public abstract long place(Params p, long now);

    /**
     * Returns {@code cost} permits taken at {@code place}, as far as they are still held there: a window that
     * has passed or a bucket that has refilled holds none. Never lets the key exceed its limit.
     *
     * @return whether any permits were returned
     */
    public abstract boolean giveBack(Params p, long now, long cost, long place);

    /**
     * The earliest time from which this state decides exactly as a fresh one would, if nothing happens until
     * then; {@link Long#MIN_VALUE} if it already does. A store may drop the state from then on and lose nothing.
     */
    public abstract long expiresAt(Params p);

    /** Whether the owning store has dropped this state. Call while holding the lock. */
    public final boolean isRetired() {
        return (word & RETIRED) != 0;
    }

    /** Marks this state as dropped by its store; later holders must look the key up again. Call while holding the lock. */
    public final void retire() {
        word |= RETIRED;
    }

    static long remaining(long limit, long used) {
        return used >= limit ? 0 : limit - used;
    }
}
