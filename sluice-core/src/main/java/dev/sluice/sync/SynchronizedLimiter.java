package dev.sluice.sync;

import dev.sluice.Decision;
import dev.sluice.LimiterConfig;
import dev.sluice.algorithm.AlgorithmState;
import dev.sluice.algorithm.FrameStates;
import dev.sluice.algorithm.Params;
import dev.sluice.internal.FrameCounts;
import dev.sluice.internal.FrameMap;
import dev.sluice.internal.HeldDecider;
import dev.sluice.internal.KeyTable;
import dev.sluice.internal.LocalLimiter;
import dev.sluice.internal.LocalRounds;
import dev.sluice.internal.PreparedWrite;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterSnapshot;
import dev.sluice.spi.CounterWrite;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * A limiter of a {@link SynchronizedStore}: decides every request on this instance's {@code g + i} for the key,
 * under the key's own lock, with no I/O but the one read of a key this instance takes up ({@link #held}). The
 * store's flusher and refresher call the package-private methods
 * below to move counts between {@code i}, {@code g} and the counter store. A {@code peek} consumes nothing, but this
 * instance holds the key from then on, so the next refresh reads it.
 *
 * <p>{@link #close()} marks the limiter closed ({@link #markClosed}) and then takes every key out of {@link #keys}
 * and {@link #states}, each under its lock; a decision checks whether it is closed under the key's lock. So a
 * decision either finished before its key was taken out (and its count goes with the key to the store's flush) or
 * throws: no count is taken after the keys are handed over.
 */
final class SynchronizedLimiter extends LocalLimiter<AlgorithmState> implements HeldDecider {

    private final SynchronizedStore store;
    /** The views of the keys whose first read is over, by key: all a decision reads. */
    private final KeyTable<AlgorithmState> states = new KeyTable<>();
    /** Every key held, its first read over or not: what the rounds go through. */
    private final ConcurrentHashMap<String, KeyState> keys = new ConcurrentHashMap<>();

    SynchronizedLimiter(SynchronizedStore store, LocalRounds<?> rounds, LimiterConfig config, long idleNanos) {
        super(config, idleNanos, rounds);
        this.store = store;
    }

    @Override
    protected Decision decide(String key, long cost, boolean consume, @Nullable FrameReservation reservation) {
        AlgorithmState s = lockHeld(key);
        try {
            long now = now(); // under the lock: see decideHeld
            Decision d = decideHeld(s, now, cost, consume);
            if (reservation != null && consume && d.allowed()) {
                reservation.place = s.place(params, now);
                reservation.frame = FrameStates.frameOf(algorithm, params, reservation.place);
            }
            return d;
        } finally {
            s.unlock();
        }
    }

    /**
     * The view of {@code key}, its record read: if this instance holds no state for the key, the thread that creates
     * it reads the record ({@link SynchronizedStore#takeUp}) while every other thread asking for the same key waits for
     * that one read; threads on other keys never wait for it. No lock is held while waiting or reading. The view may
     * be retired by the time it is locked.
     */
    @Override
    protected AlgorithmState held(String key) {
        AlgorithmState s = states.get(key);
        return s != null ? s : takeUp(key);
    }

    private AlgorithmState takeUp(String key) {
        KeyState ks = keys.get(key);
        if (ks == null) {
            KeyState created = new KeyState(this, key, new CounterKey(shape, key), fresh(), now());
            ks = keys.putIfAbsent(key, created);
            if (ks == null) {
                store.takeUp(created);
                return created.view;
            }
        }
        ks.awaitLoaded();
        return ks.view;
    }

    /**
     * Puts the view of {@code ks}, whose first read is over, in the table decisions look in. Nothing else can be
     * there for its key: a key leaves the table before it leaves {@link #keys}, under its view's lock, and only a key
     * absent from {@code keys} is created again.
     */
    void publish(KeyState ks) {
        states.putIfAbsent(ks.view);
    }

    /**
     * Decides on {@code g + i}, the view {@code s} whose lock the caller holds, at {@code now}, read with the lock held,
     * and takes the permits into it where a
     * consuming decision takes them (allowed, or refused with {@code countRejected}); the flusher finds them in
     * {@link #local}. Writes nothing but the view: what the rounds need to know of the decision, the view's lock word
     * carries ({@link KeyState#lock()}).
     *
     * <p>Why the time is read under the lock: read before it, a request could wait for the lock while another thread
     * moves the key to the next frame, and the state, which never runs backwards, would then charge it to that frame,
     * or measure a sub-window counter at the later time, whatever time the request read. An observer that notes each
     * admission at the time its request read would see a frame pass the limit. Under the lock, the time of every
     * decision on a key only grows, and each admission is counted in the frame of its own time.
     */
    @Override
    public Decision decideHeld(AlgorithmState s, long now, long cost, boolean consume) {
        Decision d = s.decide(params, now, cost, consume);
        s.markUsed(consume && (d.allowed() || config.countRejected()));
        return d;
    }

    @Override
    protected @Nullable AlgorithmState find(String key) {
        return states.get(key);
    }

    /** Gives the permits back to the place of the state they were counted in; the next flush writes the change. */
    @Override
    protected boolean giveBack(AlgorithmState s, FrameReservation r, long now) {
        if (!s.giveBack(params, now, r.cost, r.place)) {
            return false;
        }
        s.markUsed(true);
        return true;
    }

    private AlgorithmState fresh() {
        return AlgorithmState.create(algorithm, params);
    }

    Params params() {
        return params;
    }

    /**
     * Closes the limiter and takes every key out of it, each under its lock (see the class comment); called by the
     * store, under its round lock, once.
     *
     * @return the keys with counts to write or a write to settle
     */
    List<KeyState> closeAndTakeKeys() {
        markClosed();
        List<KeyState> unwritten = new ArrayList<>();
        for (KeyState ks : keys.values()) {
            ks.lock();
            try {
                states.remove(ks.view);
                keys.remove(ks.key, ks);
                if (!ks.retired() && (ks.dirty() || ks.doubt != null)) {
                    unwritten.add(ks);
                }
            } finally {
                ks.unlock();
            }
        }
        return unwritten;
    }

    // ---- called by the store's flusher and refresher, one at a time -------------------------------------------

    /**
     * The keys held here that satisfy {@code which}, read under each key's lock; not those whose first read is
     * still under way (they have nothing to write, and a read of the refresher could overtake the first read).
     */
    void collect(Predicate<KeyState> which, List<KeyState> into) {
        for (KeyState ks : keys.values()) {
            ks.lock();
            try {
                if (!ks.retired() && ks.isLoaded() && which.test(ks)) {
                    into.add(ks);
                }
            } finally {
                ks.unlock();
            }
        }
    }

    /**
     * The write of {@code g + i} for {@code ks}, expecting the version of {@code g}; null if there is nothing to
     * write. Counts of frames that no longer count are dropped here: they can change no decision any more.
     */
    @Nullable
    Flight prepare(KeyState ks, LocalRounds<?> rounds) {
        long now = now();
        long liveFrom = now - lifetime + 1; // a frame counts while now < start + lifetime
        ks.lock();
        try {
            if (ks.retired()) {
                return null;
            }
            long[] view = FrameStates.frames(algorithm, params, ks.view);
            FrameCounts written = FrameCounts.difference(view, global(ks), liveFrom);
            if (written.isEmpty()) {
                ks.cleanAt = ks.changes;
                return null;
            }
            // g + i in the frames that count is the view there: i is the view less g
            FrameMap counters = FrameMap.wrap(view, view.length / 2).tail(liveFrom);
            long expireAt = counters.isEmpty() ? now : counters.frame(counters.size() - 1) + lifetime;
            long expected = ks.global.version();
            CounterWrite write = new CounterWrite(ks.id, expected, rounds.nextVersion(expected), counters, expireAt);
            return new Flight(ks, write, written, ks.changes);
        } finally {
            ks.unlock();
        }
    }

    /** The write was applied: {@code g := g + i} as written, {@code i} keeps only what came after. */
    void written(Flight f) {
        KeyState ks = f.key();
        ks.lock();
        try {
            ks.global = new CounterSnapshot(f.write().newVersion(), f.write().counters());
            if (ks.changes == f.changes()) {
                ks.cleanAt = f.changes(); // the view is what was written
            }
            ks.doubt = null;
        } finally {
            ks.unlock();
        }
    }

    /** The call carrying the write failed: it may or may not have been applied. */
    void unknown(Flight f) {
        KeyState ks = f.key();
        ks.lock();
        try {
            ks.doubt =
                    new KeyState.Attempt(f.write().expectedVersion(), f.write().newVersion(), f.written());
        } finally {
            ks.unlock();
        }
    }

    /**
     * Takes the record just read as {@code g}, settling a write of unknown outcome first: if the record carries that
     * write's version, it was applied and its counts leave {@code i}; if it still carries the version the write
     * expected, it was not. Otherwise another instance has written since and the outcome cannot be known: the counts
     * stay in {@code i} and will be written again.
     *
     * @return whether a write of unknown outcome could not be settled
     */
    boolean loaded(KeyState ks, CounterSnapshot snapshot) {
        ks.lock();
        try {
            if (ks.retired()) {
                return false;
            }
            KeyState.Attempt a = ks.doubt;
            if (a == null && snapshot.version() == ks.global.version()) {
                return false; // the very record g already is (a version is never reused): nothing to rebuild
            }
            boolean doubtful = false;
            FrameCounts local = local(ks, now());
            if (a != null) {
                ks.doubt = null;
                if (snapshot.version() == a.newVersion()) {
                    local.addAll(a.written(), -1);
                } else {
                    doubtful = snapshot.version() != a.expectedVersion();
                }
            }
            ks.global = snapshot;
            FrameCounts merged = FrameCounts.of(FrameMap.copyOf(snapshot.counters()), local.size());
            merged.addAll(local, 1);
            restore(ks.view, merged);
            if (local.isEmpty()) {
                ks.cleanAt = ks.changes;
            }
            return doubtful;
        } finally {
            ks.unlock();
        }
    }

    /**
     * Drops the keys that are idle: nothing to write, no request here for the idle timeout, and no count known here
     * that still counts (so dropping the key changes no decision this instance would take on what it knows). A key
     * that comes back is taken up anew: its record is read before its first decision, as for any new key.
     *
     * @return how many keys were dropped
     */
    int evictIdle() {
        long now = now();
        int evicted = 0;
        for (KeyState ks : keys.values()) {
            ks.lock();
            try {
                if (!ks.retired()
                        && ks.isLoaded()
                        && !ks.dirty()
                        && ks.doubt == null
                        && now - ks.lastUsed >= idleNanos
                        && ks.view.expiresAt(params) <= now) {
                    ks.view.retire();
                    states.remove(ks.view); // first: a key absent from keys may be created again
                    keys.remove(ks.key, ks);
                    evicted++;
                }
            } finally {
                ks.unlock();
            }
        }
        return evicted;
    }

    /**
     * {@code i} of {@code ks}, whose lock the caller holds: the view's counts less {@code g}'s, frame by frame, in
     * the frames that still count at {@code now} (older ones can change no decision any more, here or elsewhere).
     * Negative where a cancel gave back permits already written.
     */
    private FrameCounts local(KeyState ks, long now) {
        return FrameCounts.difference(FrameStates.frames(algorithm, params, ks.view), global(ks), now - lifetime + 1);
    }

    /** {@code g} of {@code ks} as pairs: a record's counts are a frame map already, so this copies nothing. */
    private static FrameMap global(KeyState ks) {
        return FrameMap.copyOf(ks.global.counters());
    }

    private void restore(AlgorithmState view, FrameCounts counts) {
        long[] frames = new long[counts.size()];
        long[] values = new long[counts.size()];
        int n = 0;
        for (int j = 0; j < counts.size(); j++) {
            if (counts.count(j) > 0) {
                frames[n] = counts.frame(j);
                values[n] = counts.count(j);
                n++;
            }
        }
        FrameStates.restoreInto(algorithm, params, view, frames, values, n);
    }

    // ---- inspection, for tests ----------------------------------------------------------------------------------

    /** What this instance holds for {@code key}; null if it holds nothing. */
    @Nullable
    Held inspect(String key) {
        KeyState ks = keys.get(key);
        if (ks == null) {
            return null;
        }
        ks.lock();
        try {
            return new Held(
                    ks.global.version(), ks.global.counters(), local(ks, now()).toMap(), ks.doubt != null);
        } finally {
            ks.unlock();
        }
    }

    /** Keys held in memory. */
    int keyCount() {
        return keys.size();
    }

    /** The counter shape of this limiter's records. */
    String shape() {
        return shape;
    }

    /** The store this limiter belongs to. */
    SynchronizedStore store() {
        return store;
    }

    /**
     * A key as one instance holds it.
     *
     * @param version the version of {@code g}
     * @param global  {@code g}, counts per frame
     * @param local   {@code i}, counts per frame
     * @param doubt   whether a write of unknown outcome awaits settling
     */
    record Held(long version, Map<Long, Long> global, Map<Long, Long> local, boolean doubt) {
        /** The sum of {@code g}. */
        long g() {
            return global.values().stream().mapToLong(Long::longValue).sum();
        }

        /** The sum of {@code i}. */
        long i() {
            return local.values().stream().mapToLong(Long::longValue).sum();
        }
    }

    /**
     * A write prepared for one key, with the counts of {@code i} it carries and the key's {@link KeyState#changes}
     * when it was prepared.
     */
    record Flight(KeyState key, CounterWrite write, FrameCounts written, long changes)
            implements PreparedWrite<KeyState> {}

    @Override
    public String toString() {
        return describe("SynchronizedLimiter", keys.size());
    }
}
