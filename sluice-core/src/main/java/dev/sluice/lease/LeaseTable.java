package dev.sluice.lease;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Iterator;
import java.util.NoSuchElementException;
import org.jspecify.annotations.Nullable;

/**
 * One limiter's leases ({@code L}: {@link Lease}, or a test's) by key: an open-addressing hash table of the leases themselves, read without a lock.
 *
 * <p>Why not a {@code ConcurrentHashMap}: its look-up reads the key's hash, the table's slot, the map's node and
 * then the value, four objects in a chain where every one is a cache miss once the keys outnumber what a core's cache
 * holds (10,000 leases do); a decision within a slice is a few nanoseconds of arithmetic besides. Here the slot holds
 * the lease, and the lease holds its key and its hash next to the fields a decision reads ({@link LeaseHead}): one
 * object fewer in the chain.
 *
 * <p>How it stays correct without a lock on reads:
 *
 * <ul>
 *   <li>Writers ({@link #putIfAbsent}, {@link #remove}) take this table's lock, write only the current array, and
 *       publish a slot with a release store; a reader sees a lease fully built.
 *   <li>A removed lease's slot becomes a tombstone, never null, so that the probe sequences of the keys after it stay
 *       whole. When live leases and tombstones fill half the array, or live leases fall under an eighth of it, the
 *       live leases move to a new array that they fill a sixth to a third of, which replaces the old one; the old one
 *       is not written again, and keeps its empty slots, so a probe through it still ends.
 *   <li>A reader may so find a lease that was removed since (its owner retires a lease before removing it, and
 *       looks the key up again when the lease it locked is retired), or miss a lease added since; {@link #get} is a
 *       hint, {@link #putIfAbsent}, under the lock on the current array, the answer.
 * </ul>
 */
@SuppressWarnings("unchecked") // every slot but a tombstone holds an L, and a tombstone is never returned
final class LeaseTable<L extends LeaseHead> implements Iterable<L> {

    private static final int MIN_CAPACITY = 16;
    private static final int MAX_CAPACITY = 1 << 30;
    /** Leases a table holds at most: a third of the largest array, so that a rebuild always leaves it half empty. */
    static final int MAX_LEASES = MAX_CAPACITY / 3;

    private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(LeaseHead[].class);
    /** What a removed lease leaves in its slot: not a key's, and not the end of a probe. */
    private static final LeaseHead TOMBSTONE = new LeaseHead("", 0) {};

    /** A power of two long; replaced, never written, once a larger or cleaner one is built. */
    private volatile LeaseHead[] table = new LeaseHead[MIN_CAPACITY];

    private final Object lock = new Object();
    /** Leases in {@link #table}. Written under the lock; read without it for sizes and statistics. */
    private volatile int live;
    /** Slots of {@link #table} that are not empty: leases and tombstones. Guarded by the lock. */
    private int used;

    /** The hash a lease of {@code key} keeps and its probe starts from: the key's, mixed, so that close hashes part. */
    static int hash(String key) {
        int h = key.hashCode() * 0x9E3779B9;
        return h ^ (h >>> 16);
    }

    /**
     * The lease of {@code key} if there is one, or a lease removed a moment ago (see the class comment). Compares the
     * key by identity first: a caller that keeps its key strings (a service's configured descriptors) passes the very
     * string the lease holds, and its bytes are then not read.
     */
    @Nullable
    @SuppressWarnings("ReferenceEquality") // identity first, then equals: see above
    L get(String key) {
        LeaseHead[] t = table;
        int h = hash(key);
        int mask = t.length - 1;
        for (int i = h & mask; ; i = (i + 1) & mask) {
            LeaseHead e = (LeaseHead) SLOT.getAcquire(t, i);
            if (e == null) {
                return null;
            }
            if (e != TOMBSTONE && (e.key == key || (e.hash == h && e.key.equals(key)))) {
                return (L) e;
            }
        }
    }

    /** Adds {@code lease} under its key unless the key has one: returns that one, or null if {@code lease} was added. */
    @Nullable
    L putIfAbsent(L lease) {
        synchronized (lock) {
            LeaseHead[] t = table;
            int mask = t.length - 1;
            int free = -1;
            int i = lease.hash & mask;
            for (; ; i = (i + 1) & mask) {
                LeaseHead e = t[i];
                if (e == null) {
                    break;
                }
                if (e == TOMBSTONE) {
                    if (free < 0) {
                        free = i;
                    }
                } else if (e.hash == lease.hash && e.key.equals(lease.key)) {
                    return (L) e;
                }
            }
            if (free < 0 && (used + 1) * 2 > t.length) {
                if (live >= MAX_LEASES) {
                    throw new IllegalStateException("a limiter holds at most " + MAX_LEASES + " leases");
                }
                t = rebuild(t, live + 1);
                mask = t.length - 1;
                for (i = lease.hash & mask; t[i] != null; i = (i + 1) & mask) {}
            } else if (free >= 0) {
                i = free;
                used--; // the tombstone's slot is taken again
            }
            SLOT.setRelease(t, i, lease);
            used++;
            live++;
            return null;
        }
    }

    /** Removes {@code lease} if it is still the one held for its key; whether it was. */
    boolean remove(L lease) {
        synchronized (lock) {
            LeaseHead[] t = table;
            int mask = t.length - 1;
            for (int i = lease.hash & mask; ; i = (i + 1) & mask) {
                LeaseHead e = t[i];
                if (e == null) {
                    return false;
                }
                if (e == lease) {
                    SLOT.setRelease(t, i, TOMBSTONE);
                    live--;
                    if (live * 8 < t.length && t.length > MIN_CAPACITY) {
                        rebuild(t, live); // mostly tombstones: a smaller array, probes that end sooner
                    }
                    return true;
                }
            }
        }
    }

    /** Leases held now (a reader may see one removed or miss one added while it counts). */
    int size() {
        return live;
    }

    /**
     * The leases of the array current when called, in no order; weakly consistent as a {@code ConcurrentHashMap}'s
     * views are: a lease added or removed while iterating may or may not be seen. Removing during the iteration is
     * fine.
     */
    @Override
    public Iterator<L> iterator() {
        LeaseHead[] t = table;
        return new Iterator<>() {
            private int index;
            private @Nullable L next = advance();

            private @Nullable L advance() {
                while (index < t.length) {
                    LeaseHead e = (LeaseHead) SLOT.getAcquire(t, index++);
                    if (e != null && e != TOMBSTONE) {
                        return (L) e;
                    }
                }
                return null;
            }

            @Override
            public boolean hasNext() {
                return next != null;
            }

            @Override
            public L next() {
                L ls = next;
                if (ls == null) {
                    throw new NoSuchElementException();
                }
                next = advance();
                return ls;
            }
        };
    }

    /**
     * Moves the live leases of {@code old} to a new array that {@code leases} fill at most a third of, and makes it
     * the table. The caller holds the lock. (A third, not less: the array is read on every decision, and one of
     * 32,768 slots for 10,000 leases, 128 KB, stays in a core's cache where a sparser one would not.)
     */
    private LeaseHead[] rebuild(LeaseHead[] old, int leases) {
        int capacity = MIN_CAPACITY;
        while (capacity < leases * 3L && capacity < MAX_CAPACITY) {
            capacity <<= 1;
        }
        LeaseHead[] t = new LeaseHead[capacity];
        int mask = capacity - 1;
        int n = 0;
        for (LeaseHead e : old) {
            if (e != null && e != TOMBSTONE) {
                int i = e.hash & mask;
                while (t[i] != null) {
                    i = (i + 1) & mask;
                }
                t[i] = e;
                n++;
            }
        }
        used = n;
        table = t; // a volatile write: readers of the new array see every slot written above
        return t;
    }
}
