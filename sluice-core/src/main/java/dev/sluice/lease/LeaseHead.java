package dev.sluice.lease;

import dev.sluice.internal.KeyTable;

/**
 * What a decision within a slice reads and writes of a {@link Lease}: the key with its hash, by which the limiter's
 * {@link KeyTable} finds it, and the lock word (the superclass's fields), then the slice, the demand and the view's
 * summary. A class of its own for the layout: HotSpot lays out a superclass's fields before its subclass's, and a
 * class's longs in the order they are declared, so these take the first 72 bytes of every lease, one or two cache
 * lines, and the fields that claims and rounds use follow. With 10,000 keys the leases do not fit a core's cache, and
 * a decision's cost is mostly its cache misses. Every field but the key and hash is guarded by the lock
 * ({@link #lock()}), the only lock a decision takes.
 */
abstract class LeaseHead extends KeyTable.Entry {

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
}
