package dev.sluice.lease;

import dev.sluice.Algorithm;
import dev.sluice.FailurePolicy;
import dev.sluice.LimiterConfig;
import dev.sluice.LocalStore;
import dev.sluice.LocalStoreBuilder;
import dev.sluice.RateLimiter;
import dev.sluice.SluiceException;
import dev.sluice.internal.CounterStoreCalls;
import dev.sluice.internal.Latches;
import dev.sluice.internal.LocalRounds;
import dev.sluice.spi.CounterSnapshot;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.Durations;
import dev.sluice.spi.SharedStoreOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;

/**
 * Leased mode: every instance decides from memory, within a slice of the limit it has claimed from a
 * {@link CounterStore} by compare-and-set; the store's count of a frame is what was admitted plus the slices still
 * outstanding, and a claim is written only if the algorithm's check still passes with it, so the instances together
 * never admit over the limit. For limits where a round trip per request is too much and synchronized mode's overshoot
 * is too much too.
 *
 * <pre>{@code
 * LeasedStore leased = LeasedStore.builder(counterStore)
 *         .interval(Duration.ofMillis(100))
 *         .build();                                        // starts a daemon thread; close() stops it
 * RateLimiter limiter = RateLimiter.builder(Algorithm.SLIDING_TAIL)
 *         .limit(100, Duration.ofMinutes(1))
 *         .store(leased)
 *         .build();
 * }</pre>
 *
 * <ul>
 *   <li><b>Algorithms:</b> those of {@link #algorithms()}; {@link #bind} refuses the others with an
 *       {@link IllegalArgumentException} naming the algorithm.</li>
 *   <li><b>Decisions</b> take only the key's own lock. A request the slice held for the current frame covers is
 *       admitted with no I/O. A request it does not cover <em>claims</em> more on its own thread: one compare-and-set
 *       (after a read when the record was never read, the write met a conflict, or other instances usually wrote
 *       the record since this one last did), bounded by the counter store's timeout; other requests on the key wait
 *       for that claim rather than start their own, and one request waits for at most
 *       {@value LeasedLimiter#CLAIMS_PER_REQUEST} claims. It is refused without I/O when the store, as last
 *       read, has no room for it, or a claim already found too little room in this frame since the last round.</li>
 *   <li><b>Never over the limit:</b> the store's counts are at least what every instance admitted in every frame,
 *       and a claim passes the algorithm's check on them, so the algorithm's measure of the admitted requests stays
 *       within the limit at every moment, whatever the number of instances, from a cold start too. Clocks of the
 *       instances must be in step (frames are cut by each limiter's clock).</li>
 *   <li><b>Slices</b> are sized by demand: what this instance was asked for in the last interval (or so far in this
 *       one, if more), never less than the request needs, cut to the room left. A slice is valid in the frame it was
 *       charged to only. Its unused part goes back with the next write once the frame turns (if the frame still
 *       counts, as for the sliding algorithms), at the round if it is more than twice the expected demand, and all of
 *       it when the key is idle or the limiter or store is closed. The slice of an instance that dies lapses when its
 *       frame stops counting: at most one window after the frame began for {@code FIXED_WINDOW} and
 *       {@code SLIDING_WINDOW_COUNTER} (one sub-window more when strict), two windows for {@code SLIDING_TAIL} (with a
 *       weight falling to zero over the second).</li>
 *   <li><b>Store outage:</b> requests go on within the slice held. A request it does not cover gets the
 *       {@linkplain Builder#failurePolicy failure policy}'s answer, by default {@code FAIL_CLOSED} (refused): so the
 *       limit holds through an outage unless the policy says allow. Only the request whose claim finds the store down
 *       waits for it (up to the counter store's timeout); after that, until a call succeeds again, no request does.</li>
 *   <li><b>Claims ahead:</b> the round claims, for every key with demand and no refusal in the last interval, the
 *       slices of the
 *       frames that start before the next round, in the same batched write as its give-backs, so that at a frame's
 *       start requests find a slice held and make no call. Each is sized as a claim at the frame's start would be,
 *       plus twice its square root, and claims ahead never take a frame past half the limit.</li>
 *   <li><b>Reservations:</b> {@link dev.sluice.Reservation#cancel()} puts the permits back into the slice, or gives them
 *       back to the store with the next write if their frame has turned but still counts.</li>
 *   <li><b>Joint requests</b> ({@link RateLimiter#tryAcquireAll}) over this store's limiters are one step over the
 *       slices held: every part is taken under all the keys' locks, or none is; a short slice claims between two such
 *       steps, with no lock held ({@link LeaseJoint}).</li>
 * </ul>
 *
 * <p>Thread-safe. {@link #refresh()} runs one at a time (the background thread and callers alike).
 */
public final class LeasedStore extends LocalStore {

    /*
     * How is leased mode designed, and why?
     *
     * Synchronized mode lets every instance spend what it believes is left, so n instances may together spend up to n
     * times what is left. Leased mode makes the store hand out what is left instead. The stored count of a frame (a
     * window, or a sub-window) is the sum of the slices granted in it: what was admitted plus what is held and not yet
     * used. An instance claims a slice by one compare-and-set of the record: read counts plus the slice, written only
     * if the record still has the version read and only if the algorithm's check passes with the slice counted
     * (FIXED_WINDOW: count + s <= L; SLIDING_TAIL: floor(prev*(W-e)/W) + cur + s <= L; SLIDING_WINDOW_COUNTER: the
     * live sub-windows + s <= L). Then it admits within the slice from memory. Since every admitted request of a frame
     * is inside a slice of that frame, the stored counts are never below the admitted ones, and the measure of the
     * admitted requests never exceeds the measure of the stored counts, which a claim keeps within L. Within a frame
     * the measure only falls as time goes on (older frames weigh less or leave), so a check that passed at the claim
     * holds for the rest of the frame; a slice is therefore good in its own frame only, and a request is always
     * charged to the frame the algorithm counts it in (for SLIDING_TAIL the current window, counted whole; for the
     * sub-window counter the current sub-window).
     *
     * Two instances A and B, FIXED_WINDOW, limit 10 a minute, a round every second; slices as granted(used), the
     * store's count (LeasedWorkedExampleTest, with the calls each step makes):
     *
     *   step                                                            A        B        store
     *   1. A: 1 request; reads (no record), claims 1                    1(1)     -        1
     *   2. A: 1 more; claims 2, its demand so far                       3(2)     -        3
     *   3. A: 1 more, from its slice: no call                           3(3)     -        3
     *   4. a round: nothing to give back, nothing refused: no call
     *   5. B: 4 requests; reads 3, claims 1, 2, (slice), 4              3(3)     7(4)     10
     *   6. A: 2 requests; A last saw 3, so it claims: a conflict, it    3(3)     7(4)     10
     *      re-reads 10, no room: refused, and no claim on a request in
     *      this window until the next round (the second: no call)
     *   7. a round: B keeps its 3 unused (no more than twice its demand); A, refused, re-reads 10
     *   8. a round: B had no request, so it gives its 3 back            3(3)     4(4)     7
     *   9. A: 1 request, refused without a call (A last read 10); a round re-reads 7; then 5 requests: A claims 1
     *      and 2, admits 3 and refuses 2 without a call                 6(6)     4(4)     10
     *  10. the minute turns; A's first request claims 6, its demand     6(1)     -        6
     *      in this interval, in the new window
     *
     * In step 10 the old window's slices simply lapse: a fixed window does not count its past. For the sliding
     * algorithms the unused part of a slice whose frame turned but still counts is given back with the next write.
     *
     * Cold start. An instance that holds no slice for a key claims before it admits, so a flood on a key new to every
     * instance at once still gets at most L: the claims are serialized by the record's version, and each takes only
     * what the one before left. The first slice is small (the demand seen so far) and the next ones grow with demand.
     *
     * Failure. A write whose call failed may have been applied. Its claim is not taken (if applied, the slice lapses
     * with its frame) and its give-backs are taken as written (if not applied, those permits lapse too). So a doubt
     * only ever errs towards admitting less.
     *
     * Claiming ahead. A slice is good in its own frame only, so without more every key would claim at least once per
     * frame on a request's thread: with short frames (a window of 100 ms, or sub-windows shorter than the time between
     * a key's requests) that is a round trip per frame or per request. So the round, which writes each key's
     * give-backs anyway, also claims, for every key with demand and no refusal in the last interval, the slices of the
     * frames that start before the next round: in the same write, one call per batch of keys. A slice claimed ahead is charged to
     * its own frame, where the algorithm counts the requests it will admit, and is cut so that at the start of every
     * frame it counts in (the moment that frame's measure is highest) the frames counting then stay within half the
     * limit; a claim in the current frame is likewise cut so that no later frame of the record would pass the limit at
     * its start. So the stored counts stay at least what was admitted frame by frame, and their measure within L at
     * every moment, as before. When its frame starts the slice is the one held; a frame that passes without a request
     * gives its slice back with the next write; an idle key gives back everything; a dead instance's slice lapses
     * with its frame (up to one interval later than a slice claimed on a request would). A key with no slice for the
     * frame, or whose slice runs out, claims on the request as before: cold start is unchanged.
     *
     * Two instances, FIXED_WINDOW, 20 a second, a round every 500 ms (LeasedClaimAheadTest):
     *
     *   step                                                            A        B        store :00 / :01
     *   1. at :00.600 A gets 3 requests: reads, claims 1 and 2          3(3)     -        3
     *   2. B gets 2: reads, claims 1 and 2                              3(3)     3(2)     6
     *   3. at :00.700 a round at B, then A: the window of :01 starts    3(3)+5   3(2)+5   6 / 10
     *      before the next round; each claims ahead its demand plus
     *      twice its square root (B 5; A 7, cut to 5 at half the
     *      limit after a conflict): one write each
     *   4. at :01.100 A gets 3, B 2: from the slices claimed ahead,     5(3)     5(2)     - / 10
     *      no call
     *   5. A gets 3 more: 2 from its slice, then a claim on the         11(6)    5(2)     - / 16
     *      request, as before (6, its demand)
     *   6. at :01.700 a round: no request in the interval, so no        6(6)     2(2)     - / 8
     *      claim ahead; both give back what they hold unused
     */

    /**
     * The default interval.
     *
     * @deprecated the round runs every {@linkplain Builder#interval(Duration) interval}: use {@link #DEFAULT_INTERVAL}
     */
    @Deprecated
    public static final Duration DEFAULT_REFRESH_INTERVAL = DEFAULT_INTERVAL;

    /**
     * Sub-windows per round above which binding a sub-window counter warns: the round claims every one of them ahead
     * for every busy key, and with 60 per round over 10,000 keys it costs more than its interval.
     */
    static final int SUB_WINDOWS_AHEAD_WARNING = 10;

    private static final System.Logger LOG = System.getLogger(LeasedStore.class.getName());

    private final LocalRounds<LeasedLimiter> rounds;
    private final CounterStoreCalls calls;
    private final FailurePolicy failurePolicy;
    /** This instance's tag in the demand notes of the records it writes ({@link DemandNotes}). */
    private final int noteTag = DemandNotes.newTag();

    private final LongAdder roundCount = new LongAdder();
    private final LongAdder claims = new LongAdder();
    private final LongAdder claimsAhead = new LongAdder();
    private final LongAdder probeClaims = new LongAdder();
    private final LongAdder permitsClaimed = new LongAdder();
    private final LongAdder permitsReturned = new LongAdder();
    private final LongAdder conflicts = new LongAdder();
    private final LongAdder evictions = new LongAdder();
    private final LongAdder spans = new LongAdder();

    private LeasedStore(LocalRounds<LeasedLimiter> rounds, FailurePolicy failurePolicy) {
        super(rounds);
        this.rounds = rounds;
        this.calls = rounds.calls();
        this.failurePolicy = failurePolicy;
        rounds.start(new LeaseJoint(this), this::handOver, this::refresh);
    }

    /** A builder for a leased store claiming slices from {@code counterStore}. */
    public static Builder builder(CounterStore counterStore) {
        return new Builder(counterStore);
    }

    /**
     * A limiter with {@code config} whose slices live in the shape {@link SharedStoreOptions#shape shape(config)}: the
     * same records as synchronized mode's, so limiters of one shape share the limit across instances.
     *
     * @throws IllegalArgumentException if the algorithm is not one of {@link #algorithms()}
     */
    @Override
    public RateLimiter bind(LimiterConfig config) {
        String warning = subWindowWarning(config, rounds.interval()); // null for every algorithm but one it keeps
        if (warning != null) {
            LOG.log(System.Logger.Level.WARNING, warning);
        }
        return rounds.bind(config, (c, idleNanos) -> new LeasedLimiter(this, rounds, c, idleNanos, false));
    }

    /**
     * A limiter as {@link #bind} makes it, for a health probe: it decides and claims like any other, but its claims
     * (on its requests and ahead) are counted in {@link LeaseStats#probeClaims()}, not with the requests', so that
     * {@link #stats()} tells what the requests needed from the store. Its store calls are counted with every other
     * call in {@link LeaseStats#storeCalls()}.
     *
     * @throws IllegalArgumentException if the algorithm is not one of {@link #algorithms()}
     */
    public RateLimiter bindProbe(LimiterConfig config) {
        return rounds.bind(config, (c, idleNanos) -> new LeasedLimiter(this, rounds, c, idleNanos, true));
    }

    /**
     * What binding {@code config} warns of, if anything: a sub-window counter with more than
     * {@value #SUB_WINDOWS_AHEAD_WARNING} sub-windows per round, all of which the round claims ahead for every busy
     * key (see {@code docs/leased-mode.md}, "Known limits"); null otherwise.
     */
    static @Nullable String subWindowWarning(LimiterConfig config, Duration refreshInterval) {
        if (config.algorithm() != Algorithm.SLIDING_WINDOW_COUNTER) {
            return null;
        }
        long round = refreshInterval.toNanos();
        long ahead = round / config.subWindowNanos();
        if (ahead <= SUB_WINDOWS_AHEAD_WARNING) {
            return null;
        }
        return "leased " + config.algorithm() + " of " + config.buckets() + " sub-windows of "
                + Durations.format(Duration.ofNanos(config.subWindowNanos())) + ": every round of "
                + Durations.format(refreshInterval) + " claims about "
                + ahead + " of them ahead for every busy key, which with many keys can cost the round more than its"
                + " interval (see docs/leased-mode.md, Known limits); use at most "
                + Math.max(1, config.windowNanos() * SUB_WINDOWS_AHEAD_WARNING / round)
                + " buckets, or a longer window";
    }

    /**
     * One round: for every key held, rolls it to the current frame, writes what it has to give back (unused slices of
     * frames that still count, the part of a slice beyond twice the expected demand, cancelled permits, counted
     * rejections) and, in the same write, claims ahead: for a key with demand in the last interval, the slices of the
     * frames that start before the next round. Reads the keys refused since the last round so their next claim sees
     * the room freed meanwhile, and drops idle keys. In batches of at most the batch size per limiter. A store failure
     * stops the round.
     *
     * @return whether every call of the round succeeded
     */
    public boolean refresh() {
        return rounds.runRound(roundCount, this::round);
    }

    /** The work of {@link #refresh()}; the caller holds the round lock. */
    private boolean round() {
        long callsBefore = calls.calls();
        boolean ok = true;
        for (LeasedLimiter limiter : rounds.limiters()) {
            List<Lease> write = new ArrayList<>();
            List<Lease> read = new ArrayList<>();
            limiter.round(write, read);
            List<Lease> held = new ArrayList<>();
            boolean settled = false; // every write answered, so every mark on the written keys lifted already
            try {
                if (ok) {
                    ok = writeAll(write, null, true);
                    settled = ok;
                }
                if (ok) {
                    hold(read, held);
                    ok = rounds.load(held, null, LeasedStore::loaded);
                }
            } finally {
                if (!settled) {
                    write.forEach(LeasedStore::release); // a call failed, or a write was prepared and never sent
                }
                held.forEach(LeasedStore::release);
            }
        }
        if (calls.failing() && ok && calls.calls() == callsBefore) {
            ok = probe();
        }
        return ok;
    }

    /** What this store has done so far. */
    public LeaseStats stats() {
        return new LeaseStats(
                roundCount.sum(),
                calls.calls(),
                claims.sum(),
                claimsAhead.sum(),
                probeClaims.sum(),
                permitsClaimed.sum(),
                permitsReturned.sum(),
                conflicts.sum(),
                calls.failures(),
                evictions.sum(),
                spans.sum());
    }

    /**
     * The permits this instance holds and has not used, over every key of every limiter: slices left, and unused
     * slices or cancelled permits not yet given back. The store's counts are what every instance admitted plus what
     * each holds unused (plus slices lapsing with a dead or failed instance's frames).
     */
    public long unusedPermits() {
        long u = 0;
        for (LeasedLimiter l : rounds.limiters()) {
            u += l.unused();
        }
        return u;
    }

    /**
     * The interval of the background round.
     *
     * @deprecated use {@link #interval()}
     */
    @Deprecated
    @SuppressWarnings("InlineMeSuggester") // core has no dependency for @InlineMe
    public Duration refreshInterval() {
        return interval();
    }

    /**
     * Stops the background thread (if any), waiting up to one interval for a running round, then gives back every
     * unused slice (one write per key that holds one, in batches). Limiters keep deciding after close, on slices they
     * claim anew; close them first to let them go.
     */
    @Override
    public void close() {
        rounds.stop();
        rounds.round().lock();
        try {
            for (LeasedLimiter l : rounds.limiters()) {
                writeAll(l.returnAll(), null, false);
            }
        } finally {
            rounds.round().unlock();
        }
    }

    @Override
    public String toString() {
        return "LeasedStore[" + rounds.describe() + ", " + failurePolicy + (rounds.closed() ? ", closed" : "") + "]";
    }

    // ---- called by the limiters ---------------------------------------------------------------------------------

    /**
     * Claims for {@code ls} what {@code cost} needs beyond its slice, on the calling thread, which has marked the
     * lease busy: reads the record first if it was never read or others usually wrote it since this instance last did
     * ({@link Lease#readFirst}), then compare-and-sets, re-reading after a conflict, up to
     * {@link LocalRounds#CONFLICT_ROUNDS} writes, as a round does.
     *
     * @return the failure that ended the claim, or null
     */
    @Nullable
    SluiceException claim(Lease ls, long cost) {
        (ls.limiter.probe ? probeClaims : claims).increment();
        for (int attempt = 0; attempt < LocalRounds.CONFLICT_ROUNDS; attempt++) {
            boolean known;
            boolean readFirst;
            long seen;
            ls.lock();
            try {
                known = ls.read;
                readFirst = attempt == 0 && ls.readFirst();
                seen = ls.global.version();
            } finally {
                ls.unlock();
            }
            if (!known || attempt > 0 || readFirst) {
                SluiceException e = readOne(ls);
                if (e != null) {
                    return e;
                }
                if (readFirst) {
                    sawStale(ls, seen);
                }
            }
            LeasedLimiter.Write w = ls.limiter.prepare(ls, cost, false, rounds);
            if (w == null) {
                return null;
            }
            boolean[] applied;
            try {
                applied = calls.compareAndSet(List.of(w.write()), ls.limiter);
            } catch (SluiceException e) {
                ls.limiter.unknown(w);
                return e;
            }
            if (known && attempt == 0 && !readFirst) {
                sawStale(ls, !applied[0]);
            }
            if (settle(w, applied[0]) || (w.claimsNothing() && w.carried().isEmpty())) {
                return null; // a note alone is not written again after a conflict: the next claim may carry it
            }
        }
        return null;
    }

    /** Counts into {@code ls}'s {@link Lease#staleSixteenths} whether a write without a read first met a conflict. */
    private static void sawStale(Lease ls, boolean stale) {
        ls.lock();
        try {
            ls.sawStale(stale);
        } finally {
            ls.unlock();
        }
    }

    /**
     * Counts into {@code ls}'s {@link Lease#staleSixteenths} whether the read made before a write found the record
     * written by another instance since {@code seen}, the version this one last read or wrote.
     */
    private static void sawStale(Lease ls, long seen) {
        ls.lock();
        try {
            ls.sawStale(ls.global.version() != seen);
        } finally {
            ls.unlock();
        }
    }

    /** Reads the record of a lease never read, for a {@code peek}; the failure, or null. */
    @Nullable
    SluiceException readFirst(Lease ls) {
        return readOne(ls);
    }

    /** Whether the last call to the counter store failed. */
    boolean failing() {
        return calls.failing();
    }

    FailurePolicy failurePolicy() {
        return failurePolicy;
    }

    long roundNanos() {
        return rounds.interval().toNanos();
    }

    int noteTag() {
        return noteTag;
    }

    void evicted() {
        evictions.increment();
    }

    /** A claim whose call failed was found applied by a later read: its permits are this instance's after all. */
    void recovered(long permits) {
        permitsClaimed.add(permits);
    }

    /** Waits for a claim or round call on a key; bounded by the counter store's timeout, which bounds the call. */
    void await(CountDownLatch latch) {
        Latches.awaitUninterruptibly(latch);
    }

    /**
     * Takes over the leases of {@code limiter}, which closes ({@link LocalRounds#release}, under the round lock,
     * once): gives back their unused slices now if the store answers.
     */
    private void handOver(LeasedLimiter limiter) {
        writeAll(limiter.closeAndTakeLeases(), null, false);
    }

    // ---- calls to the counter store -----------------------------------------------------------------------------

    /** Whether the write is settled (applied); a conflict puts its changes back for the next attempt. */
    private boolean settle(LeasedLimiter.Write w, boolean applied) {
        if (applied) {
            w.lease().limiter.applied(w);
            permitsClaimed.add(w.claimed());
            if (w.claimsAhead()) {
                (w.lease().limiter.probe ? probeClaims : claimsAhead).increment();
            }
            if (w.span() != null) {
                spans.increment();
            }
            long returned = w.carried().givingBack();
            if (returned > 0) {
                permitsReturned.add(returned);
            }
            return true;
        }
        conflicts.increment();
        w.lease().limiter.conflicted(w);
        return false;
    }

    /**
     * Writes the changes of {@code leases} in batches, re-reading and writing again after conflicts; with
     * {@code claimAhead} (the round) each write also claims the slices of the frames that start before the next round.
     * A lease whose record was never read, or that reads first by choice ({@link Lease#readFirst}), is read before its
     * first write; each first write counts into {@link Lease#staleSixteenths} whether another instance had written
     * the record since this one last saw it.
     *
     * @return whether no call failed
     */
    private boolean writeAll(List<Lease> leases, @Nullable RateLimiter limiter, boolean claimAhead) {
        List<Lease> unread = new ArrayList<>();
        Map<Lease, Long> seenBeforeRead = new HashMap<>(); // read first by choice: the version last seen
        Set<Lease> blind = new HashSet<>(); // written without a read first
        for (Lease ls : leases) {
            ls.lock();
            try {
                if (ls.readFirst()) {
                    seenBeforeRead.put(ls, ls.global.version());
                } else if (ls.read) {
                    blind.add(ls);
                    continue;
                }
            } finally {
                ls.unlock();
            }
            unread.add(ls);
        }
        LocalRounds.Written written = rounds.writeAll(
                unread,
                leases,
                limiter,
                (ls, snapshot) -> {
                    loaded(ls, snapshot);
                    Long seen = seenBeforeRead.remove(ls);
                    if (seen != null) {
                        sawStale(ls, seen);
                    }
                },
                ls -> claimAhead ? ls.limiter.prepareForRound(ls, rounds) : ls.limiter.prepare(ls, 0, false, rounds),
                new LocalRounds.Settle<>() {
                    @Override
                    public void applied(LeasedLimiter.Write w) {
                        if (blind.remove(w.key())) {
                            sawStale(w.key(), false);
                        }
                        settle(w, true);
                        release(w.key());
                    }

                    @Override
                    public void conflicted(LeasedLimiter.Write w) {
                        if (blind.remove(w.key())) {
                            sawStale(w.key(), true);
                        }
                        settle(w, false);
                        release(w.key()); // read again and written again, marked again, later in this round
                    }

                    @Override
                    public void unknown(LeasedLimiter.Write w) {
                        w.key().limiter.unknown(w);
                        release(w.key());
                    }
                });
        return written != LocalRounds.Written.CALL_FAILED;
    }

    private static void loaded(Lease ls, CounterSnapshot snapshot) {
        ls.limiter.loaded(ls, snapshot);
    }

    @Nullable
    private SluiceException readOne(Lease ls) {
        try {
            ls.limiter.loaded(ls, calls.load(List.of(ls.id), ls.limiter).get(0));
            return null;
        } catch (SluiceException e) {
            return e;
        }
    }

    /** For a store that has been failing: one read of any held key, to see whether it answers again. */
    private boolean probe() {
        for (LeasedLimiter l : rounds.limiters()) {
            Lease ls = l.any();
            if (ls != null) {
                return readOne(ls) == null;
            }
        }
        return true;
    }

    /**
     * Marks busy for the round's read ({@link Lease#roundHolds}) the leases of {@code leases} that no claim is under way
     * on, adding them to {@code held}: a lease a claim is under way on reads the record with it.
     */
    static void hold(List<Lease> leases, List<Lease> held) {
        for (Lease ls : leases) {
            ls.lock();
            try {
                if (ls.busy != null) {
                    continue;
                }
                ls.busy = new CountDownLatch(1);
                ls.roundHolds = true;
            } finally {
                ls.unlock();
            }
            held.add(ls);
        }
    }

    /**
     * Lifts the round's busy mark from {@code ls}, if it holds one ({@link Lease#roundHolds}), and wakes the requests
     * waiting for it: as soon as the round's call about the key has ended, not at the end of the round, which over
     * many keys lasts many such calls.
     */
    static void release(Lease ls) {
        CountDownLatch mark;
        ls.lock();
        try {
            if (!ls.roundHolds) {
                return;
            }
            mark = ls.busy;
            ls.busy = null;
            ls.roundHolds = false;
        } finally {
            ls.unlock();
        }
        if (mark != null) {
            mark.countDown();
        }
    }

    /**
     * Builds a {@link LeasedStore}; the options both local-decision modes have are {@link LocalStoreBuilder}'s. Every
     * interval the background round measures demand (a slice is sized by what this instance was asked for in one
     * interval), gives back unused slices, claims ahead, and re-reads refused keys, whose next claim then sees the room
     * freed meanwhile: the shorter, the sooner unused permits return to the others. Not thread-safe; setters validate
     * at once.
     */
    public static final class Builder extends LocalStoreBuilder<Builder, LeasedStore> {
        private FailurePolicy failurePolicy = FailurePolicy.FAIL_CLOSED;

        private Builder(CounterStore counterStore) {
            super(counterStore);
        }

        /** {@inheritDoc} A key is dropped at a round, once its slice is given back. */
        @Override
        public Builder idleTimeout(Duration timeout) {
            return super.idleTimeout(timeout);
        }

        /**
         * The answer to a request that the slice held does not cover while the counter store fails: default
         * {@link FailurePolicy#FAIL_CLOSED} (refused, retry after one interval), which keeps the limit through an
         * outage; {@code FAIL_OPEN} admits it, counted nowhere, so the cluster may pass the limit; {@code THROW}
         * throws a {@link SluiceException}. Requests the slice covers are admitted whatever the policy.
         */
        public Builder failurePolicy(FailurePolicy policy) {
            this.failurePolicy = Objects.requireNonNull(policy, "failurePolicy must not be null");
            return this;
        }

        /**
         * The store; starts its background thread unless {@link #manualRounds()}: then the application calls
         * {@link LeasedStore#refresh()} itself.
         */
        @Override
        public LeasedStore build() {
            return new LeasedStore(rounds("leased"), failurePolicy);
        }

        // ---- deprecated aliases, kept for one release -----------------------------------------------------------

        /**
         * How often the background round runs.
         *
         * @deprecated use {@link #interval(Duration)}
         */
        @Deprecated
        @SuppressWarnings("InlineMeSuggester") // core has no dependency for @InlineMe
        public Builder refreshInterval(Duration interval) {
            return interval(SharedStoreOptions.requirePositive("refreshInterval", interval));
        }
    }
}
