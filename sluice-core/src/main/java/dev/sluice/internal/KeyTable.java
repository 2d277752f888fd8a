package dev.sluice.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/**
 * One limiter's per-key states ({@code E}: a lease, an algorithm's state in memory or in synchronized mode, a test's
 * entry) by key: an open-addressing hash table of the states themselves, read without a lock.
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
     * object, in the cache line the decision reads anyway. The key is given to the constructor, or bound once with
     * {@link #bind} before the entry is added to a table (an algorithm's state is built before its key is known).
     *
     * <p>The lock word also carries what an owner needs to know of the decisions taken under it without a field of its
     * own: whether a decision used the entry and whether it changed it ({@link #markUsed}, {@link #takeMarks}), and a
     * version for reads that take no lock ({@link #optimisticStamp}, {@link #validate}).
     */
    public abstract static class Entry {

        /*
         * Why a lock word and not synchronized: a decision holds the key's lock for a few dozen nanoseconds of
         * arithmetic, and an uncontended monitor costs two atomic instructions (enter and exit), as much as the
         * decision itself. Here taking the lock is one
         * compare-and-set of an int and dropping it a plain store with release semantics. A thread that finds
         * the lock held tries once more after a pause, then parks for the shortest time the system gives (tens of
         * microseconds on Linux) before it tries again. Why not spin longer: on a hot key the waiter takes the lock
         * the moment it is let go, so the key's cache line, lock word and fields, moves between the cores on every
         * decision, which between cores far apart costs more than the decision. A parked waiter leaves the holder
         * to decide on a line that stays in its core, at about one thread's speed however many threads ask, and no
         * core burnt on spinning. The price is that waiter's latency, the shortest park the system gives, only while
         * another thread holds the same key (Resilience4j's limiter parks the same way). Measured in
         * docs/benchmarks.md.
         *
         *   word & HELD              a thread holds the lock
         *   word & RETIRED           dropped by its owner; whoever takes the lock must look the key up again
         *   word & DENYING           the last decision under the lock refused (a hint for the optimistic read)
         *   word & CHANGED, USED     a decision changed, or used, the entry since its owner last took the marks
         *   word >>> 5               a version, one more at every release of the lock
         *
         * The word fits the 4 bytes after the object header.
         *
         * Optimistic reads (a seqlock, as StampedLock's): a refusal that changes nothing (countRejected off) and a
         * peek need not write, so they need not take the lock and contend for its cache line with every other caller
         * of a hot key. A reader takes the word as a stamp (free, not retired), copies the fields, reads the time, and
         * validates that the word is still the stamp; every writer holds the lock while it writes and bumps the
         * version when it lets go, so a valid stamp means the copy is the entry as it was at one instant, between
         * the two reads of the word, when the time was read too. (The version wraps after 2^27 releases: a reader
         * would have to stall across that many decisions on one key, seconds of them, and land on the same count.)
         *
         * The marks: synchronized mode must know which keys a decision changed (they have counts to write) and when a
         * key was last used (an idle one is dropped). A decision notes both in the word it writes anyway to let the
         * lock go; the owner's rounds take them, under the lock, into bookkeeping the decision never reads. So a
         * decision touches the entry's cache line and no other object of the owner's.
         */
        private static final int HELD = 1;
        private static final int RETIRED = 2;
        private static final int DENYING = 4;
        /** {@link #takeMarks()}: a decision changed the entry. */
        public static final int CHANGED = 8;
        /** {@link #takeMarks()}: a decision used the entry. */
        public static final int USED = 16;

        private static final int VERSION = 32;

        /**
         * One release of an entry's lock in this many says so ({@link #unlockSampled}): an owner that counts its
         * decisions only roughly adds this much at such a release instead of one at each, and so writes no shared
         * counter on most decisions.
         */
        public static final int SAMPLE = 16;

        /** The version's bits that are all clear once every {@link #SAMPLE} releases. */
        private static final int SAMPLED = VERSION * (SAMPLE - 1);

        /** What {@link #optimisticStamp(boolean)} answers when an optimistic read cannot start. */
        public static final int NO_STAMP = HELD;

        private static final VarHandle WORD;

        static {
            try {
                WORD = MethodHandles.lookup().findVarHandle(Entry.class, "word", int.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        /** The bits above; changed only by a compare-and-set to take the lock, or by its holder. */
        private int word;

        /** {@link KeyTable#hash} of {@link #key}. Set once, before the entry is published to a table. */
        int hash;

        /** The key; empty until {@link #bind bound}. Set once, before the entry is published to a table. */
        String key;

        /** An entry whose key is bound later, if ever ({@link #bind}). */
        protected Entry() {
            this("");
        }

        protected Entry(String key) {
            this.hash = KeyTable.hash(key);
            this.key = key;
        }

        /** The key this entry is kept under; empty if it was never {@link #bind bound}. */
        public final String key() {
            return key;
        }

        /**
         * Gives this entry its key, once, before it is added to a table (whose release store of the slot publishes
         * it); a reader that finds the entry in the table sees the key.
         */
        public final void bind(String key) {
            this.hash = KeyTable.hash(key);
            this.key = key;
        }

        /** Takes this entry's lock, waiting (a pause, then parking) while another thread holds it. */
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
         * Releases this entry's lock; everything written while holding it is visible to the next holder, and an
         * optimistic read that overlapped the hold fails its {@link #validate}.
         */
        public final void unlock() {
            WORD.setRelease(this, (word & ~HELD) + VERSION);
        }

        /**
         * {@link #unlock()}, answering whether this release is one in {@link #SAMPLE} of the entry's: the release
         * after which the lock's version, which every release moves on, is a multiple of {@code SAMPLE}.
         */
        public final boolean unlockSampled() {
            int w = (word & ~HELD) + VERSION;
            WORD.setRelease(this, w);
            return (w & SAMPLED) == 0;
        }

        /**
         * Whether a read under {@code stamp} ({@link #optimisticStamp}) falls in one in {@link #SAMPLE} of the entry's
         * versions, as {@link #unlockSampled} answers for a release.
         */
        public static boolean sampled(int stamp) {
            return (stamp & SAMPLED) == 0;
        }

        /** Whether the entry has been dropped by its owner, for good. Call while holding the lock. */
        public final boolean retired() {
            return (word & RETIRED) != 0;
        }

        /** Marks the entry dropped by its owner: later holders must look the key up again. Call holding the lock. */
        public final void retire() {
            word |= RETIRED;
        }

        /**
         * Notes that a decision used this entry and, if {@code changed}, changed what the owner keeps of it: the
         * marks {@link #takeMarks()} hands over. Call while holding the lock.
         */
        public final void markUsed(boolean changed) {
            word |= changed ? USED | CHANGED : USED;
        }

        /**
         * The marks set since the last call ({@link #USED}, {@link #CHANGED}), cleared. Call while holding the lock.
         */
        public final int takeMarks() {
            int w = word;
            word = w & ~(USED | CHANGED);
            return w & (USED | CHANGED);
        }

        /**
         * Notes whether the decision just made under the lock refused: the hint an optimistic read goes by
         * ({@link #optimisticStamp(boolean)}). Call while holding the lock.
         */
        public final void noteRefused(boolean refused) {
            word = refused ? word | DENYING : word & ~DENYING;
        }

        /**
         * A stamp to read this entry without its lock (read its fields, then {@link #validate}), or {@link #NO_STAMP}
         * if a thread holds the lock, the entry is retired, or {@code onlyIfRefusing} and the last decision under the
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
         * Whether nothing was written to this entry since {@code stamp} was taken: then what was read in between is
         * the entry as it was at one instant.
         */
        public final boolean validate(int stamp) {
            VarHandle.acquireFence();
            return stamp != NO_STAMP && (int) WORD.getVolatile(this) == stamp;
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
