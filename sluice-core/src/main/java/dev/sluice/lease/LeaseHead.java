package dev.sluice.lease;

import dev.sluice.internal.KeyTable;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * What a decision within a slice reads and writes of a {@link Lease}: the key with its hash, by which the limiter's
 * {@link KeyTable} finds it (the superclass's fields), its lock word, the slice, the demand and the view's summary. A
 * class of its own for the layout: HotSpot lays out a superclass's fields before its subclass's, so these take the
 * first 72 bytes of every lease, one or two cache lines, and the fields that claims and rounds use follow. With 10,000
 * keys the leases do not fit a core's cache, and a decision's cost is mostly its cache misses. Every field but the key
 * and hash is guarded by the lock ({@link #lock()}), the only lock a decision takes.
 */
abstract class LeaseHead extends KeyTable.Entry {

    /*
     * A lock word rather than synchronized, for the reason AlgorithmState gives: a decision within the slice is a few
     * nanoseconds of arithmetic, and an uncontended monitor costs two atomic instructions (enter and exit), where
     * this is one compare-and-set to take and a release store to drop. A thread that finds it held spins briefly,
     * then yields (the holder may be a round, or a request descheduled mid-decision). Not reentrant.
     *
     *   word & HELD       a thread holds the lock
     *   word & RETIRED    dropped from its limiter's table; whoever takes the lock must look the key up again
     *
     * After the superclass's hash (in the four bytes the header leaves) and key, HotSpot puts the word in the four
     * bytes before the first eight-byte boundary, then the longs in the order they are declared.
     */
    private static final int HELD = 1;
    private static final int RETIRED = 2;
    private static final int SPINS = 128;
    private static final VarHandle WORD;

    static {
        try {
            WORD = MethodHandles.lookup().findVarHandle(LeaseHead.class, "word", int.class);
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
     * What the lease's view of the record said when it last changed or the frame turned: the room it left, and the
     * clock time at which its measure falls to zero. An admission answers from these, without running the algorithm a
     * second time.
     */
    long viewRoom;

    long viewResetAt;

    LeaseHead(String key) {
        super(key);
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
}
