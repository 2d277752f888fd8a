package dev.sluice.sync;

import dev.sluice.LimiterConfig;
import dev.sluice.LocalStore;
import dev.sluice.LocalStoreBuilder;
import dev.sluice.RateLimitListener;
import dev.sluice.RateLimiter;
import dev.sluice.SluiceException;
import dev.sluice.internal.CounterStoreCalls;
import dev.sluice.internal.FailureLog;
import dev.sluice.internal.LocalRounds;
import dev.sluice.spi.CounterSnapshot;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.Durations;
import dev.sluice.spi.SharedStoreOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * Synchronized mode: every instance decides on its own, from memory, and shares its counts with the others through a
 * {@link CounterStore} in bulk, in the background. For limits where a round trip per request is too much.
 *
 * <pre>{@code
 * SynchronizedStore sync = SynchronizedStore.builder(counterStore)
 *         .flushInterval(Duration.ofMillis(100))
 *         .build();                                        // starts a daemon thread; close() stops it
 * RateLimiter limiter = RateLimiter.builder(Algorithm.SLIDING_TAIL)
 *         .limit(100, Duration.ofMinutes(1))
 *         .store(sync)
 *         .build();
 * }</pre>
 *
 * <ul>
 *   <li><b>Algorithms:</b> those of {@link #algorithms()}, whose state is counts per frame that add up across
 *       instances. {@link #bind} refuses the others with an {@link IllegalArgumentException}: the state of a bucket,
 *       and the order of a sliding log, do not add up.</li>
 *   <li><b>Decisions</b> read {@code g + i} (below) under the key's own lock: no I/O, no lock shared across keys,
 *       exact per instance. {@code remaining}, {@code resetAfter} and {@code retryAfter} are computed from
 *       {@code g + i}. Time comes from each limiter's clock.</li>
 *   <li><b>Taking up a key:</b> the first decision (or {@code peek}, or joint request) on a key this instance does not
 *       hold yet, including one dropped as idle that comes back, first reads the key's record: one call to the
 *       counter store with one key, on the request's thread, bounded by the counter store's own
 *       {@linkplain dev.sluice.spi.CounterStoreBuilder#timeout timeout}. Other requests on that key wait for that
 *       same read; requests on other keys, flushes and refreshes never do, and no lock is held during it. If the read
 *       fails or times out, the key is decided on what this instance knows (its own counts) until a refresh reads it,
 *       and the failure goes to the store's and the limiter's listeners with the limiter (with no listener at all, to
 *       a warning of the {@code dev.sluice} logger a minute). So during an outage each new key's first requests wait up
 *       to that timeout once. A closed store reads no new key.</li>
 *   <li><b>Accuracy:</b> an instance does not see what the others admitted since its last refresh (or, for a key it
 *       has just taken up, since it read the record), so the sum across instances may pass the limit by what the
 *       other instances admit between their flush and this instance's refresh (one interval when both run together);
 *       see {@code docs/sync-mode.md}. It never falls short of it. A key new to every instance at once (a flood on a
 *       fresh key reaching all of them within one interval) is read empty by each, so each may admit up to the whole
 *       limit in that first interval.</li>
 *   <li><b>Store outage:</b> decisions go on locally, each instance within the limit on what it has seen; counts are
 *       kept and written when the store answers again. The limiter's {@link dev.sluice.FailurePolicy} does not apply:
 *       no request waits for the store, but for the first requests on a key taken up during the outage, which wait
 *       once for the read to fail (above).</li>
 *   <li><b>Joint requests</b> ({@link RateLimiter#tryAcquireAll}) over limiters of one store are one step on
 *       {@code g + i}: the keys' locks are taken in one order, every part is decided without consuming, and all
 *       are counted if all pass; a refused request counts in none (but where a refusing limit counts rejections).
 *       No I/O, but for taking up keys not held yet, which happens first, before any lock is taken.</li>
 *   <li><b>Listeners:</b> the store's {@link Builder#listener listener} hears every decision of its limiters (each
 *       limiter's own listener hears its own), and every call to the counter store: its time, and its failure, with
 *       a {@code null} limiter, since flushes and refreshes are the store's own work; but the read that takes up a
 *       key is the limiter's request, so it goes to the limiter's listener too, with the limiter. A listener that
 *       throws changes no decision and no count.</li>
 *   <li><b>Closing a limiter</b> ({@link RateLimiter#close()}) writes what it has not yet written (else the next
 *       flush does), and the store then keeps no reference to it.</li>
 *   <li><b>Reservations:</b> {@link dev.sluice.Reservation#cancel()} gives the permits back to the frame they were
 *       counted in, flushed or not, as long as that frame still counts; the give-back reaches the store with the next
 *       flush.</li>
 * </ul>
 *
 * <p>Thread-safe. {@link #flush()} and {@link #refresh()} run one at a time (the background thread and callers
 * alike); they never block a decision for longer than it takes to copy one key's counts.
 */
public final class SynchronizedStore extends LocalStore {

    /*
     * How is synchronized mode designed, and why?
     *
     * Per key each instance holds g, the record as it last read or wrote it (counts per frame and a version), and i,
     * the counts it took since. A decision runs the algorithm on g + i: the key's state is an ordinary algorithm state
     * holding g + i, rebuilt whenever g changes, so decisions are exactly those of the in-memory store for the same
     * requests. The flusher writes g + i for every key with a non-empty i, in batches, each write expecting the
     * version of g. Applied: g := g + i, i := what came in meanwhile. Refused (another instance wrote first): read
     * the record again, g := it, and write the new g + i. The store's record is thus always the sum of what every
     * instance has flushed, and no count is lost or taken twice by a conflict. The refresher reads every held key so
     * that each instance sees the others' counts.
     *
     * Two instances A and B, a key with limit 10, state as g/i (version of g), the store's count and version; every
     * write draws a new version (here from one sequence, 1, 2, 3, ...):
     *
     *   step                                        A           B           store
     *   1. start                                    0/0 (-)     0/0 (-)     0 (no record)
     *   2. one request at A                         0/1 (-)     0/0 (-)     0
     *   3. A flushes 1 as v1, creating the record   1/0 (v1)    0/0 (-)     1 v1
     *   4. B refreshes                              1/0 (v1)    1/0 (v1)    1 v1
     *   5. 1 request at A, 3 at B                   1/1 (v1)    1/3 (v1)    1 v1
     *   6. B flushes 1+3 as v2 expecting v1         1/1 (v1)    4/0 (v2)    4 v2
     *   7. A flushes 1+1 as v3 expecting v1         conflict: nothing written           4 v2
     *   8. A re-reads (4/1), flushes 5 as v4        5/0 (v4)    4/0 (v2)    5 v4
     *   9. B has not read since                     5/0 (v4)    4/0 (v2)    5 v4
     *  10. B refreshes                              5/0 (v4)    5/0 (v4)    5 v4 = all 5 requests
     *  11. C, a third instance that never held the key, gets a request: it reads the record first, so it decides on
     *      5/0 (v4) and admits with 4 remaining, as A and B would; deciding on 0/0 it would have said 9
     *
     * Taking up a key. An instance holds no g for a key it has not decided on yet (a new key, a restart, a key dropped as
     * idle). Deciding on an empty g then would let it admit up to the whole limit before its first refresh, however much
     * the others have counted: step 11 on 0/0. So the thread that creates the key's state reads the record before it
     * decides (one call, one key, the counter store's timeout), and threads that ask for the same key meanwhile wait for
     * that read rather than start their own: 64 threads on a new key cost one read. The key is in the limiter's map
     * from the start, so no thread creates a second one, but it is "not loaded": the flusher has nothing of it to write
     * (no decision has counted yet) and the refresher skips it, so a refresh's read can never be overtaken by the
     * older take-up read. Its state enters the table decisions look in only once the read is over. No lock is held
     * while reading or waiting; the key's lock is taken only afterwards. A failed read leaves g empty, as before this
     * read existed, and is reported; the refresher reads the key from then on. What the read cannot fix is a key new
     * to every instance at once: all read an empty record and each may spend up to the limit in its first interval
     * (a leased mode, handing out slices of what is left, is the answer to that).
     *
     * Versions. Every write sets a version drawn at random (never reused, in practice) rather than the old one plus
     * one. This settles two hazards a counter would leave open. First, a record that expired and was deleted may be
     * created again and counted up to the very version an idle instance still holds; that instance's write would then
     * match and overwrite counts it never saw. Second, a call that fails after the store applied it (a lost answer):
     * the next read shows the version the write set exactly when it was applied, so its counts leave i and are not
     * written twice. The flusher settles such doubtful writes by a read before it writes the key again. Only when
     * another instance has written in between is the outcome unknowable; the counts are then written again (the store
     * may count them twice, never zero times) and SyncStats.doubtfulWrites says how often.
     *
     * Frames. A count belongs to the frame (window or sub-window start) of the request; the record holds the frames
     * that still count, so it is as small as the algorithm's state, and it expires when its last frame stops
     * counting. i-counts of a frame that stopped counting before they were flushed are dropped: they can no longer
     * change a decision.
     */

    /**
     * The default interval.
     *
     * @deprecated the flush interval is the store's {@linkplain Builder#interval(Duration) interval}: use
     *     {@link #DEFAULT_INTERVAL}
     */
    @Deprecated
    public static final Duration DEFAULT_FLUSH_INTERVAL = DEFAULT_INTERVAL;

    /** How often one flush re-reads and writes again the keys whose write met a conflict. */
    static final int CONFLICT_ROUNDS = LocalRounds.CONFLICT_ROUNDS;

    private final LocalRounds<SynchronizedLimiter> rounds;
    private final CounterStoreCalls calls;
    private final Duration refreshInterval;
    /** Keys of closed limiters whose counts are not yet written, or whose last write is in doubt. Guarded by round. */
    private final List<KeyState> orphans = new ArrayList<>();

    /** Failed first reads of a key when neither the store nor the limiter has a listener: a log line a minute. */
    private final FailureLog takeUpFailures;

    private final LongAdder flushes = new LongAdder();
    private final LongAdder refreshes = new LongAdder();
    private final LongAdder writes = new LongAdder();
    private final LongAdder conflicts = new LongAdder();
    private final LongAdder doubtfulWrites = new LongAdder();
    private final LongAdder evictions = new LongAdder();

    private SynchronizedStore(LocalRounds<SynchronizedLimiter> rounds, @Nullable Duration refresh) {
        super(rounds);
        this.rounds = rounds;
        this.calls = rounds.calls();
        this.refreshInterval = refresh != null ? refresh : rounds.interval();
        this.takeUpFailures = new FailureLog(toString(), "deciding on the counts held here");
        SyncJoint joint = new SyncJoint(this);
        if (refreshInterval.toNanos() == rounds.interval().toNanos()) {
            rounds.start(joint, this::handOver, () -> {
                flush();
                refresh();
            });
        } else {
            rounds.start(joint, this::handOver, this::flush);
            rounds.alsoEvery(refreshInterval, this::refresh);
        }
    }

    /** A builder for a synchronized store sharing counts through {@code counterStore}. */
    public static Builder builder(CounterStore counterStore) {
        return new Builder(counterStore);
    }

    /**
     * A limiter with {@code config} synchronized through this store. Its records live in the shape
     * {@link dev.sluice.spi.SharedStoreOptions#shape shape(config)}: limiters of the same shape share counts
     * across instances (and within this one, through the store).
     *
     * @throws IllegalArgumentException if the algorithm is not one of {@link #algorithms()}
     */
    @Override
    public RateLimiter bind(LimiterConfig config) {
        return rounds.bind(config, (c, idleNanos) -> new SynchronizedLimiter(this, rounds, c, idleNanos));
    }

    /**
     * Writes {@code g + i} of every key with counts not yet written, in batches of at most the batch size per limiter
     * (so a flush of {@code n} dirty keys of one limiter takes {@code ceil(n / batchSize)} calls), each write
     * expecting the version last read; re-reads and writes again the keys that met a conflict (up to a few rounds).
     * Writes whose outcome is in doubt from a failed call are settled first, by a read. A store failure stops the
     * flush: nothing is lost, the counts stay pending for the next one, and the failure goes to the failure listener.
     *
     * @return whether every count pending when the flush began has been written
     */
    public boolean flush() {
        return rounds.runRound(flushes, () -> {
            try {
                return writeAll(collect(ks -> ks.doubt != null), collect(KeyState::dirty));
            } finally {
                pruneOrphans();
            }
        });
    }

    /** Settles {@code doubtful}, then writes {@code dirty}; the caller holds the round lock. */
    private boolean writeAll(List<KeyState> doubtful, List<KeyState> dirty) {
        return rounds.writeAll(doubtful, dirty, null, this::loaded, ks -> ks.limiter.prepare(ks, rounds), settle)
                == LocalRounds.Written.ALL;
    }

    /** A write's outcome, into the key and the counts of {@link #stats()}. */
    private final LocalRounds.Settle<SynchronizedLimiter.Flight> settle = new LocalRounds.Settle<>() {
        @Override
        public void applied(SynchronizedLimiter.Flight f) {
            writes.increment();
            f.key().limiter.written(f);
        }

        @Override
        public void conflicted(SynchronizedLimiter.Flight f) {
            conflicts.increment();
        }

        @Override
        public void unknown(SynchronizedLimiter.Flight f) {
            f.key().limiter.unknown(f);
        }
    };

    /** Takes a record a round read as the key's {@code g}. */
    private void loaded(KeyState ks, CounterSnapshot snapshot) {
        if (ks.limiter.loaded(ks, snapshot)) {
            doubtfulWrites.increment();
        }
    }

    /**
     * Takes over the keys of {@code limiter}, which closes ({@link LocalRounds#release}, under the round lock, once):
     * requests throw from now on, its keys leave it, their counts are written now if the counter store answers, and
     * handed to the next flush if not. Then nothing here refers to the limiter, but for those handed-over keys until
     * they are written.
     */
    private void handOver(SynchronizedLimiter limiter) {
        try {
            List<KeyState> unwritten = limiter.closeAndTakeKeys();
            orphans.addAll(unwritten);
            List<KeyState> doubtful = new ArrayList<>();
            List<KeyState> dirty = new ArrayList<>();
            for (KeyState ks : unwritten) {
                ks.lock();
                try {
                    if (ks.doubt != null) {
                        doubtful.add(ks);
                    }
                    if (ks.dirty()) {
                        dirty.add(ks);
                    }
                } finally {
                    ks.unlock();
                }
            }
            if (!unwritten.isEmpty()) {
                flushes.increment();
                writeAll(doubtful, dirty);
            }
        } finally {
            pruneOrphans();
        }
    }

    /** Lets go of the keys of closed limiters that have nothing left to write; the caller holds the round lock. */
    private void pruneOrphans() {
        orphans.removeIf(ks -> {
            ks.lock();
            try {
                return !ks.dirty() && ks.doubt == null;
            } finally {
                ks.unlock();
            }
        });
    }

    /**
     * Takes up {@code ks}, a key its limiter has just created for a decision: reads its record, so that the key's
     * first decisions run on the counts the store holds, not on zero. One call to the counter store with one key, on
     * the calling thread, bounded by the counter store's own timeout, holding no lock; the other threads deciding on
     * the same key wait for it ({@link KeyState#awaitLoaded()}). A failed read is counted and reported as the
     * limiter's (to the store's and the limiter's listeners; with neither, a log line a minute) and the key is decided
     * on what is known here until a refresh reads it. Once the store is closed no key is read; while the last call to
     * the counter store failed (an outage) neither, so that no request waits for a store that is down: such a key is
     * decided on what is known here until the next refresh, as before the store answered. Lets the waiting threads go
     * whatever happens.
     */
    void takeUp(KeyState ks) {
        try {
            if (!rounds.closed() && !calls.failing()) {
                readFirst(ks);
            }
        } finally {
            ks.loaded();
        }
    }

    private void readFirst(KeyState ks) {
        SynchronizedLimiter limiter = ks.limiter;
        CounterSnapshot snapshot;
        try {
            snapshot = calls.load(List.of(ks.id), limiter, "reading the record of key '" + ks.key + "'")
                    .get(0);
        } catch (SluiceException failure) {
            if (rounds.listener() == RateLimitListener.NONE && limiter.config().listener() == RateLimitListener.NONE) {
                takeUpFailures.failed(failure);
            }
            return;
        }
        limiter.loaded(ks, snapshot);
    }

    /** How many limiters this store refers to; for tests. */
    int limiterCount() {
        return rounds.limiters().size();
    }

    /** How many keys of closed limiters wait for a flush; for tests. */
    int orphanCount() {
        rounds.round().lock();
        try {
            return orphans.size();
        } finally {
            rounds.round().unlock();
        }
    }

    /**
     * Drops idle keys (see {@link Builder#idleTimeout}), then reads every key still held so this instance sees the
     * counts the others have flushed. A store failure stops the refresh; decisions go on with
     * what was read before.
     *
     * @return whether every held key was read
     */
    public boolean refresh() {
        return rounds.runRound(refreshes, () -> {
            for (SynchronizedLimiter limiter : rounds.limiters()) {
                evictions.add(limiter.evictIdle());
            }
            return rounds.load(collect(ks -> true), null, this::loaded);
        });
    }

    /** What this store has done so far. */
    public SyncStats stats() {
        return new SyncStats(
                flushes.sum(),
                refreshes.sum(),
                calls.calls(),
                writes.sum(),
                conflicts.sum(),
                calls.failures(),
                doubtfulWrites.sum(),
                evictions.sum());
    }

    /**
     * The interval of the background flush.
     *
     * @deprecated the flush runs every {@link #interval()}: use that
     */
    @Deprecated
    @SuppressWarnings("InlineMeSuggester") // core has no dependency for @InlineMe
    public Duration flushInterval() {
        return interval();
    }

    /** The interval of the background refresh: {@link #interval()} unless set apart. */
    public Duration refreshInterval() {
        return refreshInterval;
    }

    /**
     * Stops the background thread (if any), waiting up to one flush interval for a running flush, then flushes once
     * more. Counts that cannot be written then (the store is down) are lost with this instance. Limiters keep deciding
     * after close, and {@link #flush()} and {@link #refresh()} still work when called; but a key taken up after close
     * is not read (the counter store may be closed too) and is decided on this instance's own counts. A take-up read
     * already under way finishes.
     */
    @Override
    public void close() {
        rounds.stop();
        flush();
    }

    // ---- the flush and refresh rounds ---------------------------------------------------------------------------

    /** The keys of every limiter, and of closed limiters not yet written, that satisfy {@code which}. */
    private List<KeyState> collect(Predicate<KeyState> which) {
        List<KeyState> keys = new ArrayList<>();
        for (SynchronizedLimiter limiter : rounds.limiters()) {
            limiter.collect(which, keys);
        }
        for (KeyState ks : orphans) {
            ks.lock();
            try {
                if (!ks.retired() && which.test(ks)) {
                    keys.add(ks);
                }
            } finally {
                ks.unlock();
            }
        }
        return keys;
    }

    @Override
    public String toString() {
        return "SynchronizedStore[" + rounds.describe()
                + (refreshInterval.toNanos() == interval().toNanos()
                        ? ""
                        : ", refresh every " + Durations.format(refreshInterval))
                + "]";
    }

    /**
     * Builds a {@link SynchronizedStore}; the options both local-decision modes have are {@link LocalStoreBuilder}'s.
     * Every interval the background thread flushes (writes the counts taken here) and then refreshes (reads every key
     * held, to see the others' counts). Not thread-safe; setters validate at once.
     */
    public static final class Builder extends LocalStoreBuilder<Builder, SynchronizedStore> {
        private @Nullable Duration refreshInterval;

        private Builder(CounterStore counterStore) {
            super(counterStore);
        }

        /**
         * How often the background thread reads every held key to see the others' counts, if not at every round;
         * default the {@linkplain #interval(Duration) interval}, in which case each round flushes and then refreshes.
         */
        public Builder refreshInterval(Duration interval) {
            this.refreshInterval = SharedStoreOptions.requirePositive("refreshInterval", interval);
            return this;
        }

        /**
         * {@inheritDoc} A key is dropped (at a refresh) only when it also has nothing to write and none of the counts
         * this instance knows for it still counts. The idle time counts from the first flush or refresh after the
         * key's last request (a decision leaves only a mark on the key, which the rounds take in), so a key may stay
         * up to one interval longer. A key that comes back is taken up as a new key: its record is read before its
         * first decision.
         */
        @Override
        public Builder idleTimeout(Duration timeout) {
            return super.idleTimeout(timeout);
        }

        /** Where new versions come from; default random. For tests that want versions 1, 2, 3. */
        Builder versions(LongSupplier versions) {
            return withVersions(versions);
        }

        /**
         * The store; starts its background thread unless {@link #manualRounds()}: then the application calls
         * {@link SynchronizedStore#flush()} and {@link SynchronizedStore#refresh()} itself.
         */
        @Override
        public SynchronizedStore build() {
            return new SynchronizedStore(rounds("synchronized"), refreshInterval);
        }

        // ---- deprecated aliases, kept for one release -----------------------------------------------------------

        /**
         * How often the background thread writes the counts taken here.
         *
         * @deprecated the flush runs every {@link #interval(Duration) interval}: use that
         */
        @Deprecated
        @SuppressWarnings("InlineMeSuggester") // core has no dependency for @InlineMe
        public Builder flushInterval(Duration interval) {
            return interval(SharedStoreOptions.requirePositive("flushInterval", interval));
        }
    }
}
