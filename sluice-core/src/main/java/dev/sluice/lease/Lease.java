package dev.sluice.lease;

import dev.sluice.algorithm.AlgorithmState;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterSnapshot;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CountDownLatch;
import org.jspecify.annotations.Nullable;

/**
 * One key held by one instance: the record as last read or written ({@code global}), the slice this instance holds
 * in the current frame ({@code granted}, of which {@code used} is spent), and the changes still to be written
 * ({@code delta}: unused slices and cancelled permits to give back, rejections to count). Every field but the identity
 * is guarded by this lease's lock ({@link #lock()}), the only lock a decision takes.
 */
final class Lease {

    /*
     * A lock word rather than synchronized, for the reason AlgorithmState gives: a decision within the slice is a few
     * nanoseconds of arithmetic, and an uncontended monitor costs two atomic instructions (enter and exit), where
     * this is one compare-and-set to take and a release store to drop. A thread that finds it held spins briefly,
     * then yields (the holder may be a round, or a request descheduled mid-decision). Not reentrant.
     *
     *   word & HELD       a thread holds the lock
     *   word & RETIRED    dropped from its limiter's map; whoever takes the lock must look the key up again
     *
     * Layout: HotSpot lays out a class's long fields in the order they are declared, right after the object header
     * and the int that fills its last four bytes. The word and the six longs a decision within the slice reads and
     * writes are declared first, so they take the first 64 bytes of the object: one or two cache lines per decision,
     * where they were spread over three among the fields claims and rounds use. With 10,000 keys the leases do not fit
     * a core's cache, and a decision's cost is mostly its cache misses.
     */
    private static final int HELD = 1;
    private static final int RETIRED = 2;
    private static final int SPINS = 128;
    private static final VarHandle WORD;

    static {
        try {
            WORD = MethodHandles.lookup().findVarHandle(Lease.class, "word", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** HELD and RETIRED; changed by a compare-and-set to take the lock, or by its holder. */
    private int word;

    /** The frame of the slice held; {@link Long#MIN_VALUE} before the first. */
    long frame = Long.MIN_VALUE;
    /** Permits of {@link #frame} granted to this instance by the store (less what it gave back). */
    long granted;
    /** Permits of {@link #frame} admitted here. Never more than {@link #granted}. */
    long used;
    /** Cost offered here (admitted or not) since the last round. */
    long demand;
    /**
     * What {@link #view} said when it last changed or the frame turned: the room it left, and the clock time at which
     * its measure falls to zero. An admission answers from these, without running the algorithm a second time.
     */
    long viewRoom;

    long viewResetAt;

    // ---- read and written by claims, rounds, peeks and the first request of a frame --------------------------------

    final LeasedLimiter limiter;
    final String key;
    final CounterKey id;

    /** The store's record as last read or written here; it counts every instance's slices. */
    CounterSnapshot global = CounterSnapshot.absent();
    /**
     * The frames of {@link #global} in increasing order, and their counts, unboxed: the view is rebuilt from them at
     * every frame a key claimed ahead enters, and walking a map of boxed numbers there cost more than the decision.
     */
    long[] globalFrames = new long[0];

    long[] globalCounts = new long[0];
    /** The latest frame in {@link #global}; {@link Long#MIN_VALUE} if it has none. */
    long globalLast = Long.MIN_VALUE;
    /** Whether {@link #global} has been read or written at least once. */
    boolean read;
    /**
     * The algorithm's state holding the frames of {@link #global} up to {@link #viewFrame}: the store's measure, for
     * remaining and retry times. Frames claimed ahead (later than the current one) are left out: they do not count yet.
     */
    AlgorithmState view;
    /** The frame {@link #view} was built for; it is built again when a later frame of the record starts. */
    long viewFrame = Long.MIN_VALUE;
    /** Per frame, what to add to the store's counts with the next write: negative to give back, positive to count. */
    final FrameDeltas delta = new FrameDeltas();
    /**
     * Slices the round claimed ahead, for frames after {@link #frame}: the store counts them already. When its frame
     * starts, a slice becomes {@link #granted}; a frame that passes without a request here gives its slice back. Kept
     * as consecutive frames in an array, {@code aheadSlices[aheadHead + i]} for the frame {@code aheadFrom} plus
     * {@code i} frames, {@code i < aheadLen} (zero where none): a key claimed ahead takes one at every frame it enters,
     * and a sorted map per key cost more than the decision.
     */
    long[] aheadSlices = new long[0];

    long aheadFrom;
    int aheadHead;
    int aheadLen;

    /** Cost offered here in the interval before the last round. */
    long lastDemand;
    /**
     * A claim found too little room: no more claims on requests before this clock time, a round or a new frame.
     * {@link Long#MIN_VALUE} when not starved.
     */
    long starvedUntil = Long.MIN_VALUE;
    /** Whether a request was refused since the last round (the round then reads the record, to see room). */
    boolean refused;
    /** Whether a request was refused in the interval before the last round: the key is at its limit here. */
    boolean lastRefused;
    /**
     * The clock time of the last peek here, or of the last round that found demand since the one before (a request
     * admitted from the slice does not write it: the round does, to an interval's precision).
     */
    long lastUsed;
    /**
     * The last write with claims whose call failed, so that it may or may not have been applied; the next read of the
     * record settles it ({@link LeasedLimiter#unknown}). Null if none.
     */
    LeasedLimiter.@Nullable Write doubt;
    /** A call to the store about this key under way (a claim or a round's read or write); others wait for it. */
    @Nullable
    CountDownLatch busy;

    Lease(LeasedLimiter limiter, String key, CounterKey id, AlgorithmState view, long now) {
        this.limiter = limiter;
        this.key = key;
        this.id = id;
        this.view = view;
        this.lastUsed = now;
    }

    /** Takes this lease's lock, waiting (spinning, then yielding) while another thread holds it. */
    void lock() {
        int w = word; // a plain read: the compare-and-set checks it
        if ((w & HELD) != 0 || !WORD.compareAndSet(this, w, w | HELD)) {
            lockContended();
        }
    }

    @SuppressWarnings("ThreadPriorityCheck") // the yield is the point: see the comment on the lock word
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

    /** Releases this lease's lock; everything written while holding it is visible to the next holder. */
    void unlock() {
        WORD.setRelease(this, word & ~HELD);
    }

    /** Whether the key has been dropped from its limiter's map. Call while holding the lock. */
    boolean retired() {
        return (word & RETIRED) != 0;
    }

    /** Marks the key dropped from its limiter's map, for good. Call while holding the lock. */
    void retire() {
        word |= RETIRED;
    }

    /** Adds {@code d} to {@link #delta} at {@code frame}, dropping the entry when it becomes zero. */
    void addDelta(long frame, long d) {
        if (d != 0) {
            delta.add(frame, d);
        }
    }

    /** What this instance holds unused: the slice left, the slices claimed ahead, and what it has to give back. */
    long unused() {
        long u = granted - used;
        for (int i = 0; i < aheadLen; i++) {
            u += aheadSlices[aheadHead + i];
        }
        return u + delta.givingBack();
    }
}
