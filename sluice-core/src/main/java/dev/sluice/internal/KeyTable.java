package dev.sluice.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Iterator;
import java.util.NoSuchElementException;
import org.jspecify.annotations.Nullable;

/**
 * One limiter's per-key states ({@code E}: a lease, a synchronized key's state, a test's entry) by key: an
 * open-addressing hash table of the states themselves, read without a lock.
 *
 * <p>Why not a {@code ConcurrentHashMap}: its look-up reads the key's hash, the table's slot, the map's node and
 * then the value, four objects in a chain where every one is a cache miss once the keys outnumber what a core's cache
 * holds (10,000 do); a decision on a key's state is a few nanoseconds of arithmetic besides. Here the slot holds the
 * state, and the state holds its key and its hash ({@link Entry}, a superclass, so HotSpot lays them out first, next to
 * the fields a decision reads): one object fewer in the chain.
 *
 * <p>How it stays correct without a lock on reads:
 *
 * <ul>
 *   <li>Writers ({@link #putIfAbsent}, {@link #remove}) take this table's lock, write only the current array, and
 *       publish a slot with a release store; a reader sees a state fully built.
 *   <li>A removed state's slot becomes a tombstone, never null, so that the probe sequences of the keys after it stay
 *       whole. When live states and tombstones fill half the array, or live states fall under an eighth of it, the
 *       live states move to a new array that they fill a sixth to a third of, which replaces the old one; the old one
 *       is not written again, and keeps its empty slots, so a probe through it still ends.
 *   <li>A reader may so find a state that was removed since, or miss one added since: {@link #get} is a hint,
 *       {@link #putIfAbsent}, under the lock on the current array, the answer. An owner therefore marks a state retired
 *       (under the state's own lock) before it removes it, and a decision that finds the state it locked retired looks
 *       the key up again.
 * </ul>
 *
 * @param <E> the state kept per key
 */
@SuppressWarnings("unchecked") // every slot but a tombstone holds an E, and a tombstone is never returned
public final class KeyTable<E extends KeyTable.Entry> implements Iterable<E> {

    /**
     * What a table keeps per key: the key and its hash, by which the table finds it, and the lock word that guards the
     * subclass's fields, laid out before them (HotSpot lays out a superclass's fields first): the first 24 bytes of the
     * object, in the cache line the decision reads anyway.
     */
    public abstract static class Entry {

        /*
         * A lock word rather than synchronized, for the reason AlgorithmState gives: a decision on a key's state is a
         * few nanoseconds of arithmetic, and an uncontended monitor costs two atomic instructions (enter and exit),
         * where this is one compare-and-set to take and a release store to drop. A thread that finds it held spins
         * briefly, then yields (the holder may be a round, or a request descheduled mid-decision). Not reentrant.
         *
         *   word & HELD       a thread holds the lock
         *   word & RETIRED    dropped from its table; whoever takes the lock must look the key up again
         */
        private static final int HELD = 1;
        private static final int RETIRED = 2;
        private static final int SPINS = 128;
        private static final VarHandle WORD;

        static {
            try {
                WORD = MethodHandles.lookup().findVarHandle(Entry.class, "word", int.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        /** {@link KeyTable#hash} of {@link #key}. */
        public final int hash;

        public final String key;

        /** HELD and RETIRED; changed by a compare-and-set to take the lock, or by its holder. */
        private int word;

        protected Entry(String key) {
            this.hash = KeyTable.hash(key);
            this.key = key;
        }

        /** Takes this entry's lock, waiting (spinning, then yielding) while another thread holds it. */
        public final void lock() {
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

        /** Releases this entry's lock; everything written while holding it is visible to the next holder. */
        public final void unlock() {
            WORD.setRelease(this, word & ~HELD);
        }

        /** Whether the entry has been dropped from its table, for good. Call while holding the lock. */
        public final boolean retired() {
            return (word & RETIRED) != 0;
        }

        /** Marks the entry dropped from its table (before {@link KeyTable#remove}). Call while holding the lock. */
        public final void retire() {
            word |= RETIRED;
        }
    }

    private static final int MIN_CAPACITY = 16;
    private static final int MAX_CAPACITY = 1 << 30;
    /** States a table holds at most: a third of the largest array, so that a rebuild always leaves it half empty. */
    public static final int MAX_ENTRIES = MAX_CAPACITY / 3;

    private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(Entry[].class);
    /** What a removed state leaves in its slot: not a key's, and not the end of a probe. */
    private static final Entry TOMBSTONE = new Entry("") {};

    /** A power of two long; replaced, never written, once a larger or cleaner one is built. */
    private volatile Entry[] table = new Entry[MIN_CAPACITY];

    private final Object lock = new Object();
    /** States in {@link #table}. Written under the lock; read without it for sizes and statistics. */
    private volatile int live;
    /** Slots of {@link #table} that are not empty: entries and tombstones. Guarded by the lock. */
    private int used;

    /** The hash an entry of {@code key} keeps, where its probe starts: the key's, mixed, so that close hashes part. */
    public static int hash(String key) {
        int h = key.hashCode() * 0x9E3779B9;
        return h ^ (h >>> 16);
    }

    /**
     * The entry of {@code key} if there is one, or an entry removed a moment ago (see the class comment). Compares the
     * key by identity first: a caller that keeps its key strings (a service's configured descriptors) passes the very
     * string the entry holds, and its bytes are then not read.
     */
    @Nullable
    @SuppressWarnings("ReferenceEquality") // identity first, then equals: see above
    public E get(String key) {
        Entry[] t = table;
        int h = hash(key);
        int mask = t.length - 1;
        for (int i = h & mask; ; i = (i + 1) & mask) {
            Entry e = (Entry) SLOT.getAcquire(t, i);
            if (e == null) {
                return null;
            }
            if (e != TOMBSTONE && (e.key == key || (e.hash == h && e.key.equals(key)))) {
                return (E) e;
            }
        }
    }

    /** Adds {@code entry} unless its key has one: returns that one, or null if {@code entry} was added. */
    @Nullable
    public E putIfAbsent(E entry) {
        synchronized (lock) {
            Entry[] t = table;
            int mask = t.length - 1;
            int free = -1;
            int i = entry.hash & mask;
            for (; ; i = (i + 1) & mask) {
                Entry e = t[i];
                if (e == null) {
                    break;
                }
                if (e == TOMBSTONE) {
                    if (free < 0) {
                        free = i;
                    }
                } else if (e.hash == entry.hash && e.key.equals(entry.key)) {
                    return (E) e;
                }
            }
            if (free < 0 && (used + 1) * 2 > t.length) {
                if (live >= MAX_ENTRIES) {
                    throw new IllegalStateException("a limiter holds at most " + MAX_ENTRIES + " keys");
                }
                t = rebuild(t, live + 1);
                mask = t.length - 1;
                for (i = entry.hash & mask; t[i] != null; i = (i + 1) & mask) {}
            } else if (free >= 0) {
                i = free;
                used--; // the tombstone's slot is taken again
            }
            SLOT.setRelease(t, i, entry);
            used++;
            live++;
            return null;
        }
    }

    /** Removes {@code entry} if it is still the one held for its key; whether it was. */
    public boolean remove(E entry) {
        synchronized (lock) {
            Entry[] t = table;
            int mask = t.length - 1;
            for (int i = entry.hash & mask; ; i = (i + 1) & mask) {
                Entry e = t[i];
                if (e == null) {
                    return false;
                }
                if (e == entry) {
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

    /** States held now (a reader may see one removed or miss one added while it counts). */
    public int size() {
        return live;
    }

    /**
     * The entries of the array current when called, in no order; weakly consistent as a {@code ConcurrentHashMap}'s
     * views are: an entry added or removed while iterating may or may not be seen. Removing during the iteration is
     * fine.
     */
    @Override
    public Iterator<E> iterator() {
        Entry[] t = table;
        return new Iterator<>() {
            private int index;
            private @Nullable E next = advance();

            private @Nullable E advance() {
                while (index < t.length) {
                    Entry e = (Entry) SLOT.getAcquire(t, index++);
                    if (e != null && e != TOMBSTONE) {
                        return (E) e;
                    }
                }
                return null;
            }

            @Override
            public boolean hasNext() {
                return next != null;
            }

            @Override
            public E next() {
                E ls = next;
                if (ls == null) {
                    throw new NoSuchElementException();
                }
                next = advance();
                return ls;
            }
        };
    }

    /**
     * Moves the live entries of {@code old} to a new array that {@code entries} fill at most a third of, and makes it
     * the table. The caller holds the lock. (A third, not less: the array is read on every decision, and one of
     * 32,768 slots for 10,000 entries, 128 KB, stays in a core's cache where a sparser one would not.)
     */
    private Entry[] rebuild(Entry[] old, int entries) {
        int capacity = MIN_CAPACITY;
        while (capacity < entries * 3L && capacity < MAX_CAPACITY) {
            capacity <<= 1;
        }
        Entry[] t = new Entry[capacity];
        int mask = capacity - 1;
        int n = 0;
        for (Entry e : old) {
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
