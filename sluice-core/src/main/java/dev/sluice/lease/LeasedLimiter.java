package dev.sluice.lease;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.FailurePolicy;
import dev.sluice.LimiterConfig;
import dev.sluice.SluiceException;
import dev.sluice.algorithm.AlgorithmState;
import dev.sluice.algorithm.FrameStates;
import dev.sluice.internal.FrameCounts;
import dev.sluice.internal.FrameMap;
import dev.sluice.internal.KeyTable;
import dev.sluice.internal.Latches;
import dev.sluice.internal.LocalLimiter;
import dev.sluice.internal.LocalRounds;
import dev.sluice.internal.PreparedWrite;
import dev.sluice.internal.Timeouts;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterSnapshot;
import dev.sluice.spi.CounterWrite;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import org.jspecify.annotations.Nullable;

/**
 * A limiter of a {@link LeasedStore}: decides every request within the slice this instance holds for the key's
 * current frame, under the key's own lock. When the slice is short it claims more from the store on the request's
 * thread (one claim, bounded by the counter store's timeout), unless the store, as last read, has no room for it, or a
 * claim already found none in this frame since the last round; then it refuses without I/O. A {@code peek} consumes
 * nothing and claims nothing: allowed if the slice held covers the cost or the store, as last read, has room.
 */
final class LeasedLimiter extends LocalLimiter<Lease> {

    /** How many claims (its own or others' on the same key) one request waits for before it is refused. */
    static final int CLAIMS_PER_REQUEST = 4;

    /** {@link FrameReservation#place} of permits taken from a span ({@link Lease#spanFrom}), not a frame's slice. */
    private static final long FROM_SPAN = 1;

    private final LeasedStore store;
    private final long frameSize;
    private final long roundNanos;
    /** How big the slices are. */
    private final SliceSizing sizing;
    /** When the last round started, by this limiter's clock; {@code Long.MIN_VALUE} before the first. */
    private long lastRoundStarted = Long.MIN_VALUE;
    /**
     * How much later than {@link #roundNanos} after the one before the last round came, at most {@code roundNanos}:
     * background rounds start an interval apart, but at least half an interval after the last one ended, so a round
     * longer than half an interval (a loaded machine, a slow store) makes the next one late, as a manual caller may
     * be, and a round that claims ahead only up to {@code roundNanos} leaves the frames that start in that lag to
     * claims on requests. Written by the round, read where it claims ahead.
     */
    private volatile long roundLag;

    private final KeyTable<Lease> leases = new KeyTable<>();
    /** The working arrays of {@link #claimAhead}, which only a round runs, under the store's round lock. */
    private final Scratch scratch = new Scratch();
    /** Bound by {@link LeasedStore#bindProbe}: its claims are counted apart from the requests'. */
    final boolean probe;

    LeasedLimiter(LeasedStore store, LocalRounds<?> rounds, LimiterConfig config, long idleNanos, boolean probe) {
        super(config, idleNanos, rounds);
        this.store = store;
        this.probe = probe;
        this.frameSize = algorithm == Algorithm.SLIDING_WINDOW_COUNTER ? config.subWindowNanos() : config.windowNanos();
        this.roundNanos = store.roundNanos();
        this.sizing = new SliceSizing(config, frameSize, roundNanos);
    }

    // ---- the request path ---------------------------------------------------------------------------------------

    @Override
    protected Decision decide(String key, long cost, boolean consume, @Nullable FrameReservation reservation) {
        boolean counted = false;
        int claims = 0;
        while (true) {
            @Nullable CountDownLatch waitFor = null;
            @Nullable CountDownLatch claiming = null;
            long read = now();
            Lease ls = lockHeld(key);
            try {
                long now = timeIn(ls, read);
                roll(ls, now);
                if (!consume) {
                    ls.lastUsed = Math.max(ls.lastUsed, now); // a request's is noted by the round, from its demand
                    if (!ls.read && ls.busy == null && !store.failing()) {
                        claiming = ls.busy = new CountDownLatch(1); // a first read, so the answer means something
                    } else {
                        return answer(ls, now, cost, covers(ls, now, cost));
                    }
                } else {
                    if (!counted) {
                        demand(ls, cost);
                        counted = true;
                    }
                    if (ls.used + cost <= ls.granted) {
                        ls.used += cost;
                        if (reservation != null) {
                            reservation.frame = ls.frame;
                        }
                        return admitted(ls, now);
                    }
                    if (takeFromSpan(ls, cost)) {
                        if (reservation != null) {
                            reservation.frame = ls.frame;
                            reservation.place = FROM_SPAN;
                        }
                        return admitted(ls, now);
                    }
                    if (store.failing()) {
                        return failed(ls, now, null);
                    }
                    if (ls.busy != null && claims < CLAIMS_PER_REQUEST) {
                        waitFor = ls.busy;
                    } else if (claims < CLAIMS_PER_REQUEST && mayClaim(ls, now, cost)) {
                        claiming = ls.busy = new CountDownLatch(1);
                    } else {
                        refuse(ls, cost);
                        return answer(ls, now, cost, false);
                    }
                }
            } finally {
                ls.unlock();
            }
            claims++;
            if (waitFor != null) {
                store.await(waitFor);
                continue;
            }
            if (claiming == null) {
                throw new IllegalStateException("neither waiting nor claiming"); // unreachable: every branch returns
            }
            @Nullable SluiceException failure = call(ls, claiming, consume ? cost : 0);
            if (failure != null) {
                ls.lock();
                try {
                    if (!consume) {
                        return answer(ls, now(), cost, covers(ls, now(), cost));
                    }
                    if (ls.used + cost > ls.granted) {
                        return failed(ls, now(), failure);
                    }
                } finally {
                    ls.unlock();
                }
            }
        }
    }

    /**
     * Decides a request on the calling thread, as {@link #decide} would, wherever that needs no call to the store:
     * taken from the slice held, refused with no claim to make (no room as last read, starved, its claims spent),
     * or answered by the failure policy while the store fails. A request waiting for another's claim on the key
     * waits here, until {@code deadlineNanos} ({@link System#nanoTime()}) at most. A request that must claim, or
     * whose wait outlasts the deadline, takes nothing and answers null: it is decided by {@link #tryAcquire}, which
     * may claim.
     */
    @Nullable
    Decision decideBy(String key, long cost, long deadlineNanos) {
        int claims = 0;
        while (true) {
            CountDownLatch waitFor;
            long read = now();
            Lease ls = lockHeld(key);
            try {
                long now = timeIn(ls, read);
                demand(ls, cost); // before the step, as decide counts it: a claim's worth is judged with it
                switch (step(ls, now, cost, claims)) {
                    case COVERED:
                        return takePart(ls, now, cost);
                    case REFUSE:
                        return refuseJoint(ls, now, cost, true);
                    case FAILING:
                        return failed(ls, now, null);
                    case WAIT:
                        waitFor = ls.busy;
                        break;
                    default: // CLAIM: decide, which counts the demand again, makes it
                        demand(ls, -cost);
                        return null;
                }
                demand(ls, -cost); // counted again once the claim waited for has ended
            } finally {
                ls.unlock();
            }
            claims++;
            if (waitFor == null || !Latches.awaitUntil(waitFor, deadlineNanos)) {
                return null;
            }
        }
    }

    // ---- a part of a joint request (LeaseJoint), with the lease's lock held -----------------------------------------

    /** What a part of a joint request can do with its lease now. */
    enum Step {
        /** The slice held covers the part. */
        COVERED,
        /** It does not, and the part may claim more. */
        CLAIM,
        /** It does not, and another request's claim on the key is under way: wait for it. */
        WAIT,
        /** It does not, and no claim may be made: no room as last read, starved, or its claims spent. */
        REFUSE,
        /** It does not, and the store is failing. */
        FAILING
    }

    /**
     * What the part of cost {@code cost} can do with {@code ls} at {@code now}, after {@code claims} claims (made or
     * waited for) in this request, as {@link #decide} would judge it. Rolls the lease to {@code now} first.
     */
    Step step(Lease ls, long now, long cost, int claims) {
        roll(ls, now);
        if (ls.used + cost <= ls.granted || spanCovers(ls, cost)) {
            return Step.COVERED;
        }
        if (store.failing()) {
            return Step.FAILING;
        }
        if (ls.busy != null && claims < CLAIMS_PER_REQUEST) {
            return Step.WAIT;
        }
        return claims < CLAIMS_PER_REQUEST && mayClaim(ls, now, cost) ? Step.CLAIM : Step.REFUSE;
    }

    /**
     * Counts {@code cost} as demand on {@code ls} (negative to take it back), as a request alone counts its cost before
     * any claim it makes: the claims are sized by it. The caller holds the lease's lock.
     */
    void demand(Lease ls, long cost) {
        ls.demand += cost;
    }

    /** Takes a part the slice or the span covers ({@link Step#COVERED}) and answers it. */
    Decision takePart(Lease ls, long now, long cost) {
        if (ls.used + cost <= ls.granted) {
            ls.used += cost;
        } else if (!takeFromSpan(ls, cost)) {
            throw new IllegalStateException("a part taken that neither the slice nor the span covers");
        }
        return admitted(ls, now);
    }

    /** Whether the span held covers {@code cost} in the lease's frame. The caller holds the lease's lock. */
    private static boolean spanCovers(Lease ls, long cost) {
        return ls.spanLeft >= cost && ls.frame >= ls.spanFrom && ls.frame <= ls.spanTo;
    }

    /**
     * Takes {@code cost} from the span held, if it covers it: counted in the lease's frame with the next write, which
     * also takes it off the span's two ends ({@link #foldSpan}). The caller holds the lease's lock.
     */
    private static boolean takeFromSpan(Lease ls, long cost) {
        if (!spanCovers(ls, cost)) {
            return false;
        }
        ls.spanLeft -= cost;
        ls.spanTaken += cost;
        ls.addDelta(ls.frame, cost);
        return true;
    }

    /**
     * Takes off the ends of the span held what was taken from it since the last write, with the next write: each
     * permit taken is now counted in its own frame, which lies between the two ends. The caller holds the lease's lock.
     */
    private void foldSpan(Lease ls, long now) {
        if (ls.spanTaken > 0) {
            uncharge(ls, ls.spanFrom, ls.spanTo, ls.spanTaken, now);
            ls.spanTaken = 0;
        }
    }

    /** Gives back {@code permits} charged at both ends of the span {@code from}–{@code to}, at the ends that still count. */
    private void uncharge(Lease ls, long from, long to, long permits, long now) {
        if (from + lifetime > now) {
            ls.addDelta(from, -permits);
        }
        if (to != from && to + lifetime > now) {
            ls.addDelta(to, -permits);
        }
    }

    /**
     * Ends the spans whose last frame is before {@code f}: what they did not use goes back (with the next write), and
     * the span claimed next becomes the one held. The caller holds the lease's lock.
     */
    private void endSpans(Lease ls, long f, long now) {
        while (ls.spanTo != Lease.NO_SPAN && ls.spanTo < f) {
            foldSpan(ls, now);
            if (ls.spanLeft > 0) {
                uncharge(ls, ls.spanFrom, ls.spanTo, ls.spanLeft, now);
            }
            ls.spanFrom = ls.nextFrom;
            ls.spanTo = ls.nextTo;
            ls.spanLeft = ls.nextLeft;
            ls.nextTo = Lease.NO_SPAN;
            ls.nextLeft = 0;
        }
    }

    /** Gives back every span held, whether or not it has started (with the next write). The caller holds the lease's lock. */
    private void giveBackSpans(Lease ls, long now) {
        endSpans(ls, Long.MAX_VALUE, now);
    }

    /**
     * Answers a part of a refused joint request. A part that refuses ({@code refuses}) is refused as alone, counting
     * the cost if its limit counts rejections; any other answers as a {@code peek}.
     */
    Decision refuseJoint(Lease ls, long now, long cost, boolean refuses) {
        if (refuses) {
            refuse(ls, cost);
            return answer(ls, now, cost, false);
        }
        return answer(ls, now, cost, covers(ls, now, cost));
    }

    /**
     * Claims {@code cost} on {@code ls} beyond its slice, or with {@code cost} 0 reads its record (a {@code peek}'s
     * first read), on the calling thread, which marked the lease busy with {@code claiming}; then lifts the mark and
     * wakes the requests waiting for it. No lock is held during the call.
     *
     * @return the failure that ended the call, or null
     */
    @Nullable
    SluiceException call(Lease ls, CountDownLatch claiming, long cost) {
        try {
            return cost > 0 ? store.claim(ls, cost) : store.readFirst(ls);
        } finally {
            ls.lock();
            try {
                ls.busy = null;
            } finally {
                ls.unlock();
            }
            claiming.countDown();
        }
    }

    /**
     * The lease of {@code key}, created (with nothing read and nothing granted) if this instance holds none. No I/O:
     * the first request's claim reads the record.
     */
    @Override
    protected Lease held(String key) {
        Lease ls = leases.get(key);
        if (ls == null) {
            Lease created = new Lease(this, key, new CounterKey(shape, key), fresh(), now());
            ls = leases.putIfAbsent(created);
            if (ls == null) {
                return created;
            }
        }
        return ls;
    }

    /**
     * The time of a decision, claim or give-back on {@code ls}, whose lock the caller holds, from {@code read}, the
     * clock as read before the lock was taken: {@code read} if it lies in the frame the lease holds or a later one;
     * else the clock read again (another thread moved the lease to a later frame while this one waited for the lock),
     * and never before the start of the frame held (a clock stepped back). So the lease's time never runs backwards,
     * and every admission's time lies in the frame whose slice it is charged to: the argument that a slice's frame
     * never passes the limit ("Why never over the limit" in docs/leased-mode.md) holds at the time the request was
     * decided at, not only at the time the other thread read.
     */
    long timeIn(Lease ls, long read) {
        return read >= ls.frame ? read : Math.max(now(), ls.frame);
    }

    /**
     * Moves {@code ls} to the frame of {@code now}: the slice of an older frame stops being usable, and its unused part
     * is given back (with the next write) if that frame still counts; a slice claimed ahead for the new frame becomes
     * the slice held, and slices claimed ahead for frames that passed are given back. The caller holds the lease's lock.
     */
    void roll(Lease ls, long now) {
        if (now - frameSize < ls.frame) {
            return; // still in the frame held: no division
        }
        long f = frameOf(now);
        long unused = ls.granted - ls.used;
        if (unused > 0 && ls.frame + lifetime > now) {
            ls.addDelta(ls.frame, -unused);
        }
        if (ls.spanTo < f) {
            endSpans(ls, f, now); // NO_SPAN is below every frame: nothing to end then
        }
        long granted = 0;
        while (ls.aheadLen > 0 && ls.aheadFrom <= f) {
            long slice = ls.aheadSlices[ls.aheadHead];
            if (ls.aheadFrom == f) {
                granted = slice; // claimed ahead by a round: this frame needs no claim of its own
            } else if (slice > 0 && ls.aheadFrom + lifetime > now) {
                ls.addDelta(ls.aheadFrom, -slice); // its frame passed without a request here
            }
            ls.aheadSlices[ls.aheadHead] = 0;
            ls.aheadHead++;
            ls.aheadLen--;
            ls.aheadFrom += frameSize;
        }
        ls.frame = f;
        ls.granted = granted;
        ls.used = 0;
        ls.starvedUntil = Long.MIN_VALUE;
        if (ls.globalLast > ls.viewFrame) {
            advanceView(ls, f, now); // frames of the record that were ahead of the view may have started
        } else {
            summarize(ls, now);
        }
        long liveFrom = now - lifetime + 1;
        ls.delta.dropBefore(liveFrom); // a frame that no longer counts needs nothing written
    }

    /**
     * Whether a request short of its slice may claim: not starved (a claim found too little room less than
     * {@link SliceSizing#shortHorizon} ago, in this frame and since the last round), and the store, as last read, has room for it
     * and for a claim worth a round trip: at least the permits the window frees in a tenth of an interval (for a
     * contended sliding tail, in a {@link SliceSizing#shortHorizon}: {@link SliceSizing#contendedClaim}, raised for an instance whose claims
     * keep winning), or this instance's expected demand if that is less. Give-backs not yet written count as room.
     * The record as last read is measured at {@code now}, so a sliding window's room grows as its past counts less.
     */
    private boolean mayClaim(Lease ls, long now, long cost) {
        if (now < ls.starvedUntil) {
            return false;
        }
        if (!ls.read) {
            return true;
        }
        long need = ls.used + cost - ls.granted;
        boolean contended = ls.refused || ls.lastRefused;
        boolean beyond = contended && algorithm == Algorithm.SLIDING_TAIL && holdsItsShare(ls, othersNoted(ls, now));
        long worth = sizing.worth(contended, ls.winSixteenths, beyond, expected(ls, now), untilFrameEnds(now));
        return room(ls.view, now) + ls.delta.givingBack() >= Math.max(need, worth);
    }

    /**
     * Whether this instance already holds, in the current frame, its demand's share of the limit among the demands
     * the other instances noted in the record as last read ({@link SliceSizing#holdsItsShare}): a sliding tail's
     * claims then wait for more room, and a claim that finds less takes nothing, so that the instances short of their
     * share take what frees. The other algorithms free their room at once, as a frame turns, and cap a claim at its share instead
     * ({@link SliceSizing#fairShare}).
     *
     * @param others the demand the other instances noted in the record as last read ({@link DemandNotes#others})
     */
    private boolean holdsItsShare(Lease ls, long others) {
        return SliceSizing.holdsItsShare(config.limit(), ls.granted, notedDemand(ls), others);
    }

    /** The permits this instance expects to be asked for in the current frame before the next round. */
    private long expected(Lease ls, long now) {
        return sizing.expected(perInterval(ls), ls.refused || ls.lastRefused, frameOf(now) + frameSize - now);
    }

    /** For a peek: whether the slice left, plus the room in the store as last read, covers {@code cost}. */
    private boolean covers(Lease ls, long now, long cost) {
        return ls.used + cost <= ls.granted
                || spanCovers(ls, cost)
                || room(ls.view, now) >= ls.used + cost - ls.granted;
    }

    private void refuse(Lease ls, long cost) {
        ls.refused = true;
        if (config.countRejected()) {
            ls.addDelta(ls.frame, cost);
        }
    }

    /**
     * The decision: {@code remaining} is the slice left here plus the room the store had when last read;
     * {@code resetAfter} and, for a refusal the store's counts explain, {@code retryAfter} come from those counts (for
     * the part of the cost the slice left here does not cover: the counts include that slice); a refusal with room in
     * the store retries when this instance may claim again: when its starvation ends, or (a claim bound) after the
     * round.
     */
    private Decision answer(Lease ls, long now, long cost, boolean allowed) {
        Decision m = ls.view.decide(params, now, Math.max(1, cost), false);
        long remaining = Math.min(config.limit(), Math.max(0, ls.granted - ls.used) + m.remaining());
        long reset = Math.max(m.resetAfterNanos(), ls.used > 0 ? untilFrameEnds(now) : 0);
        if (allowed) {
            return Decision.allowed(config.limit(), remaining, reset);
        }
        long beyondSlice = Math.max(1, cost - Math.max(0, ls.granted - ls.used));
        Decision n = beyondSlice == Math.max(1, cost) ? m : ls.view.decide(params, now, beyondSlice, false);
        long retry = !n.allowed() ? n.retryAfterNanos() : now < ls.starvedUntil ? ls.starvedUntil - now : roundNanos;
        if (retry <= 0) {
            retry = 1;
        }
        return Decision.denied(config.limit(), Math.min(remaining, Math.max(0, cost - 1)), reset, retry);
    }

    private long untilFrameEnds(long now) {
        return Math.max(0, frameOf(now) + frameSize - now);
    }

    /** The answer of the store's failure policy, for a request the slice held cannot cover while the store fails. */
    private Decision failed(Lease ls, long now, @Nullable SluiceException cause) {
        FailurePolicy policy = store.failurePolicy();
        if (policy == FailurePolicy.THROW) {
            throw cause != null
                    ? new SluiceException("the counter store failed; no slice left for key '" + ls.key() + "'", cause)
                    : new SluiceException("the counter store is failing; no slice left for key '" + ls.key() + "'");
        }
        boolean timedOut = Timeouts.isTimeout(cause);
        if (policy == FailurePolicy.FAIL_OPEN) {
            return Decision.fromFailurePolicy(Decision.allowed(config.limit(), 0, untilFrameEnds(now)), timedOut);
        }
        return Decision.fromFailurePolicy(
                Decision.denied(config.limit(), 0, untilFrameEnds(now), Math.max(1, store.roundNanos())), timedOut);
    }

    /** Whole permits left in the counts {@code v} holds at {@code now}. */
    private long room(AlgorithmState v, long now) {
        return v.decide(params, now, 1, false).remaining();
    }

    @Override
    protected @Nullable Lease find(String key) {
        return leases.get(key);
    }

    /**
     * Puts the permits back into the slice if their frame is still the one held, else gives them back to the store
     * with the next write.
     */
    @Override
    protected boolean giveBack(Lease ls, FrameReservation r, long now) {
        roll(ls, timeIn(ls, now));
        if (r.place == FROM_SPAN) {
            ls.addDelta(r.frame, -r.cost); // counted in its frame, and no longer at the span's ends
        } else if (r.frame == ls.frame) {
            ls.used = Math.max(0, ls.used - r.cost);
        } else {
            ls.addDelta(r.frame, -r.cost);
        }
        return true;
    }

    // ---- claims and rounds: called by the store ---------------------------------------------------------------

    /**
     * The write for {@code ls}: the record as last read, the changes pending, and, if {@code cost > 0}, a claim for
     * the part of {@code cost} the slice does not cover, sized by demand and cut to the room the record leaves. Null
     * if there is nothing to write. The caller holds no lock; the lease's lock is taken here.
     */
    @Nullable
    Write prepare(Lease ls, long cost, boolean claimAhead, LocalRounds<?> rounds) {
        long read = now();
        ls.lock();
        try {
            return prepareHeld(ls, timeIn(ls, read), cost, claimAhead, rounds);
        } finally {
            ls.unlock();
        }
    }

    /**
     * The round's write for {@code ls}, as {@link #prepare} makes it with claims ahead, marking the lease busy
     * ({@link Lease#roundHolds}) until the store has answered it, so that no claim on a request races it; the store
     * lifts the mark as soon as it has settled the write ({@link LeasedStore#release}). A claim under way on the key is
     * waited for first, once: the round's write then starts from what it left. A key whose requests claim again at
     * once is left to them (null): each claim writes the changes pending, and the next round claims ahead for the
     * key. The caller holds no lock.
     */
    @Nullable
    Write prepareForRound(Lease ls, LocalRounds<?> rounds) {
        for (boolean waited = false; ; waited = true) {
            CountDownLatch waitFor;
            long read = now();
            ls.lock();
            try {
                if (ls.busy == null) {
                    Write w = prepareHeld(ls, timeIn(ls, read), 0, true, rounds);
                    if (w != null) {
                        ls.busy = new CountDownLatch(1);
                        ls.roundHolds = true;
                    }
                    return w;
                }
                if (waited) {
                    return null;
                }
                waitFor = ls.busy;
            } finally {
                ls.unlock();
            }
            store.await(waitFor);
        }
    }

    /** {@link #prepare}'s work at {@code now}, the lease's time; the caller holds the lease's lock. */
    @Nullable
    private Write prepareHeld(Lease ls, long now, long cost, boolean claimAhead, LocalRounds<?> rounds) {
        roll(ls, now);
        long need = ls.used + cost - ls.granted;
        int spanFrames = cost > 0 && need > 0 ? spanOnRequest(ls, now) : 0;
        if (spanFrames > 0) {
            giveBackSpans(ls, now); // the span claimed here replaces them, from this frame on
        }
        foldSpan(ls, now);
        long liveFrom = now - lifetime + 1;
        FrameMap record = FrameMap.copyOf(ls.global.counters());
        FrameCounts counts = ls.delta.addedTo(record.tail(liveFrom));
        FrameCounts claims = new FrameCounts();
        boolean gated = false;
        @Nullable Span span = null;
        if (spanFrames > 0) {
            long want = Math.max(need, SliceSizing.aheadSlice(sizing.spanDemand(perInterval(ls), spanFrames)));
            long from = frameOf(now);
            long to = from + (spanFrames - 1) * frameSize;
            if (spanRoom(counts, from, from, to, config.limit() / 2)[1] >= want) {
                span = chargeSpan(counts, from, to, want); // else the key is busy: a claim of this frame alone
            }
        }
        if (cost > 0 && need > 0 && span == null) {
            long room = roomNow(counts, now);
            long claim = Math.min(room, SliceSizing.claim(need, expected(ls, now)));
            long others = DemandNotes.others(record, store.noteTag(), now);
            if (others > 0) { // contended across the instances: a share, but a claim worth its round trip
                long share = SliceSizing.fairShare(need, room, notedDemand(ls), others);
                boolean beyond = algorithm == Algorithm.SLIDING_TAIL && holdsItsShare(ls, others);
                long worth = sizing.worth(true, ls.winSixteenths, beyond, expected(ls, now), untilFrameEnds(now));
                // a sliding tail shared by three instances or more claims once a claim's worth has freed
                // (mayClaim), and then takes its share of it alone: the rest goes to the next instance to ask,
                // where a claim of the whole bar gave each bar to one instance, and some instance none in a window
                boolean shareAlone = algorithm == Algorithm.SLIDING_TAIL
                        && DemandNotes.othersNoting(record, store.noteTag(), now) >= 2;
                claim = Math.min(claim, shareAlone ? share : Math.max(share, worth));
                if (beyond && room < worth) {
                    claim = 0; // its share taken: what frees goes first to the instances short of theirs
                    gated = true;
                }
            }
            if (claim < need) {
                ls.starvedUntil = now + sizing.shortHorizon;
                if (gated) { // but free to claim again near the frame's end, for what the others leave
                    long lastClaims = frameOf(now) + frameSize - sizing.shortHorizon / 2;
                    ls.starvedUntil = Math.max(now, Math.min(ls.starvedUntil, lastClaims));
                }
            }
            if (algorithm == Algorithm.SLIDING_TAIL && (ls.refused || ls.lastRefused)) {
                ls.winSixteenths += ((claim >= need ? 16 : 0) - ls.winSixteenths) / 4;
            }
            if (claim > 0) {
                counts.add(ls.frame, claim);
                claims.put(ls.frame, claim);
            }
        }
        if (claimAhead) {
            span = claimAhead(ls, counts, claims, now);
        }
        boolean refusedHere = ls.refused || ls.lastRefused;
        long noteLapse = now + config.windowNanos() + roundNanos;
        if (claims.isEmpty() && span == null && ls.delta.isEmpty() && !noteDue(record, refusedHere, now)) {
            return null; // a key refused here whose note is stale writes it even with nothing else to write
        }
        FrameDeltas carried = ls.delta.copy(); // the changes this write carries, as they were when it was made
        ls.delta.clear();
        long expireAt = counts.isEmpty() ? now : counts.lastFrame() + lifetime;
        if (refusedHere || (record.size() > 0 && FrameMap.isNote(record.frame(0)))) {
            DemandNotes.carry(record, counts, store.noteTag(), now, refusedHere ? notedDemand(ls) : 0, noteLapse);
            if (refusedHere) {
                expireAt = Math.max(expireAt, noteLapse);
            }
        }
        long expected = ls.global.version();
        CounterWrite w = new CounterWrite(ls.id, expected, rounds.nextVersion(expected), counts.toFrameMap(), expireAt);
        return new Write(ls, w, ls.frame, claims, span, carried);
    }

    /**
     * Whether this instance was refused on the key in this interval or the last, and the record as last read holds
     * no note of its demand that lasts past the next round: a write is due even with nothing else to write, or an
     * instance refused in a full window would never note its demand, and the first to ask would keep taking the frame.
     * A note lasts a window and an interval, so this is at most one write a window.
     *
     * @param record      the record as last read
     * @param refusedHere whether this instance was refused on the key in this interval or the last
     */
    private boolean noteDue(FrameMap record, boolean refusedHere, long now) {
        return refusedHere && !DemandNotes.holds(record, store.noteTag(), now + roundNanos);
    }

    /**
     * This instance's demand for {@code ls} per window, as its {@linkplain DemandNotes note} says it: the demand of the
     * last interval or of this one so far, whichever is more, scaled from an interval to the window; at least 1.
     */
    private long notedDemand(Lease ls) {
        double demand = (double) perInterval(ls);
        double perWindow = demand * (double) config.windowNanos() / (double) roundNanos;
        return Math.max(1, Math.min(Long.MAX_VALUE / 4, (long) Math.ceil(perWindow)));
    }

    /**
     * The permits a claim in the current frame may take from {@code counts} (the record with the pending changes) at
     * {@code now}: the room the algorithm's state of the frames up to the current one leaves now, and no more than
     * any later frame of the record leaves at its start, where a frame claimed ahead is counted with the frames it
     * shares a window with.
     */
    private long roomNow(FrameCounts counts, long now) {
        long f = frameOf(now);
        long room = room(restore(counts, f), now);
        for (int i = counts.from(f, false), end = counts.from(f + lifetime, true); i < end; i++) {
            room = Math.min(room, config.limit() - measureAtStart(counts, counts.frame(i)));
        }
        return Math.max(0, room);
    }

    /**
     * The algorithm's measure of {@code counts} at the start of frame {@code g}: the sum of the frames that count
     * then (those {@code h <= g} with {@code h + lifetime > g}; a sliding tail's previous window weighs 1 at the start
     * of the window). Within frame {@code g} the measure only falls, so this is its most.
     */
    private long measureAtStart(FrameCounts counts, long g) {
        long sum = 0;
        for (int i = counts.from(g - lifetime, false), end = counts.from(g, false); i < end; i++) {
            sum += counts.count(i);
        }
        return sum;
    }

    /**
     * Adds to {@code claims} (and {@code counts}) the slices of the frames that start after {@code now} and no later
     * than the next round ({@code now} plus one interval and the lag of the last round, {@link #nextRound}), for a key
     * with demand in the last interval and no request refused here in it (a key at its limit claims on requests, as
     * before): for each, the {@linkplain SliceSizing#aheadSlice slice} for the demand per interval scaled to the shorter of an interval and a frame (what
     * a claim at the start of that frame expects), less what is held for it already, cut so that at the start of every
     * frame from it on that it counts in, the frames counting then add up to at most <em>half</em> the limit. The
     * start of a frame is where the algorithm's measure of it is highest, so that check covers every moment. Frames in
     * increasing order, so each claim sees the ones before it. The caller holds the lease's lock, and is a round, under
     * the store's round lock: the working arrays are this limiter's ({@link Scratch}).
     *
     * <p>Why half, and why not when refused: a key near its limit gains little from claiming ahead (most of its
     * requests are refused without a call) and loses by it. A slice claimed ahead competes with the claims of the current frame for the same room, and
     * for the sliding tail, whose room frees a little at a time, that room is then lost in the last interval of every
     * window; and it hands the next frame to whichever instance's
     * round runs first. Claims ahead take the lower half of the limit; above it, requests claim as before. Half is not
     * enough alone: where a round claims a whole window ahead (an interval as long as the window) the next window
     * starts empty, and the sliding tail then admits less than its limit; a key refused here in the last interval is
     * at its limit, and claims nothing ahead.
     *
     * <p>Nor does a key contended across the instances, though not refused here: one whose room now (with what others
     * claimed ahead) is less than the slice it would claim. And with rounds more than a tenth of the window apart,
     * nothing is claimed ahead for a frame expected to see fewer than ln 2 requests, which is more likely to pass empty
     * than not, its slice held unused until the next round. With rounds as long as the window, an instance asked a few
     * times a second held a slice in each of the next ten sub-windows, was never short, so never refused, and kept the
     * others from half the limit.
     */
    private @Nullable Span claimAhead(Lease ls, FrameCounts counts, FrameCounts claims, long now) {
        boolean keeps = keeps(ls);
        long perInterval = SliceSizing.demandAhead(perInterval(ls), keeps);
        if (perInterval == 0 || ls.lastRefused || ls.refused) {
            return null;
        }
        if (keeps) {
            topUp(ls, counts, claims, now, perInterval);
        }
        long first = frameOf(now) + frameSize;
        long last = nextRound(now);
        if (first > last) {
            return null;
        }
        double perFrame = sizing.aheadDemand(perInterval);
        int aheadFrames = (int) Math.min(Integer.MAX_VALUE, (last - first) / frameSize + 1);
        if (algorithm == Algorithm.SLIDING_WINDOW_COUNTER
                && sizing.spans(perInterval, perFrame, aheadFrames, lifetime / frameSize)) {
            return claimSpan(ls, counts, now, perInterval, first, aheadFrames);
        }
        if (perFrame <= 0) {
            return null; // a frame more likely to see no request than one: its slice would more likely go unused
        }
        long want = SliceSizing.aheadSlice(perFrame);
        if (roomNow(counts, now) < want) {
            return null; // the key is contended across the instances: its frames are spent on requests, not held ahead
        }
        // The record's frames and the frames from first to last, merged in order, with their counts
        int ahead = (int) ((last - first) / frameSize) + 1;
        Scratch w = scratch.fit(counts.size() + ahead);
        long[] frames = w.frames;
        long[] count = w.count;
        int n = 0;
        int t = -1; // the index of first
        for (int a = 0, r = 0; r < counts.size() || a < ahead; n++) {
            long next = a < ahead ? first + a * frameSize : Long.MAX_VALUE;
            long at = r < counts.size() ? Math.min(counts.frame(r), next) : next;
            if (at == next) {
                t = a == 0 ? n : t;
                a++;
            }
            frames[n] = at;
            count[n] = r < counts.size() && counts.frame(r) == at ? counts.count(r++) : 0;
        }
        // the measure at the start of each: the frames counting then
        long[] measure = w.measure;
        long sum = 0;
        for (int j = 0, lo = 0; j < n; j++) {
            sum += count[j];
            while (frames[lo] + lifetime <= frames[j]) {
                sum -= count[lo];
                lo++;
            }
            measure[j] = sum;
        }
        // Each frame from first to last takes a slice cut to the ceiling less the most any frame it counts in then
        // measures, with the slices before it: a frame's slice adds to every frame of its window [t, end), and
        // the windows only move on. So the most of each window is kept as a window's maximum is (a queue of the
        // frames that may yet be the most, decreasing), each frame's measure offset by the slices taken before it
        // entered: every slice taken while a frame is in the window adds to it, and to every other frame there.
        long ceiling = config.limit() / 2;
        long taken = 0; // every slice taken so far
        long[] base = w.base; // a frame's measure less the slices taken before it entered the window
        int[] most = w.most;
        int head = 0;
        int tail = 0;
        long[] slices = w.slices; // the slices taken, frame and permits, in frame order
        int taking = 0;
        for (int end = t; t < n && frames[t] <= last; t++) {
            while (end < n && frames[end] < frames[t] + lifetime) {
                base[end] = measure[end] - taken;
                while (tail > head && base[most[tail - 1]] <= base[end]) {
                    tail--;
                }
                most[tail++] = end++;
            }
            while (most[head] < t) {
                head++;
            }
            long s = Math.min(want - aheadOf(ls, frames[t]), ceiling - (base[most[head]] + taken));
            if (s > 0) {
                taken += s;
                slices[2 * taking] = frames[t];
                slices[2 * taking + 1] = s;
                taking++;
            }
        }
        claims.addInOrder(slices, taking);
        counts.addInOrder(slices, taking);
        return null;
    }

    /**
     * Claims ahead one {@linkplain Lease#spanFrom span} for the frames that start after {@code now} and no later than
     * the next round, {@code aheadFrames} from {@code first} (at most a window's, and after any span held; from the
     * current frame if no span held covers it), instead of
     * a slice per frame: the {@linkplain SliceSizing#aheadSlice slice} for the demand {@code perInterval} scaled to the
     * span, added to {@code counts} at the span's first frame and again at its last, cut so that at the start of every
     * frame those two count in, the frames counting then add up to at most half the limit, as claims ahead are. Null
     * if none: both span places taken, no room for one, or the key contended. The caller holds the lease's lock.
     */
    private @Nullable Span claimSpan(
            Lease ls, FrameCounts counts, long now, long perInterval, long first, int aheadFrames) {
        if (ls.nextTo != Lease.NO_SPAN || contendedByNotes(ls, now)) {
            return null; // two spans held already, or instances refused on the key noted their demand in its record
        }
        // from the current frame if no span covers it (a late round leaves a frame or more after the last span's end),
        // unless the span would then end before the frame of the next round: it is at most a window's frames
        long current = frameOf(now);
        long lastFrame = first + (long) (aheadFrames - 1) * frameSize;
        long from = Math.max(
                ls.spanTo == Lease.NO_SPAN ? current : Math.max(current, ls.spanTo + frameSize),
                lastFrame - lifetime + frameSize);
        long to = lastFrame;
        if (to < from) {
            return null;
        }
        long want = SliceSizing.aheadSlice(sizing.spanDemand(perInterval, (to - from) / frameSize + 1));
        long[] room = spanRoom(counts, current, from, to, config.limit() / 2);
        if (room[0] < want) {
            return null; // contended across the instances: its frames are spent on requests, not held ahead
        }
        long s = Math.min(want, room[1]);
        return s > 0 ? chargeSpan(counts, from, to, s) : null;
    }

    /**
     * Two rooms of {@code counts} (the record with the pending changes), from one pass over its frames: first, the room
     * a claim in the {@code current} frame would get, as {@link #roomNow} gives it (the sub-window counter's measure is
     * that of the start of the current frame all through it, and no later frame's start measures more than the frames
     * of the record make it); second, the most a span from frame {@code from} to {@code to} may take, counted at both
     * ends, so that at the start of every frame those two count in, the frames counting then add up to at most
     * {@code ceiling}. The start of a frame is where the sub-window counter's measure of it is highest.
     */
    private long[] spanRoom(FrameCounts counts, long current, long from, long to, long ceiling) {
        // the counts of every frame that counts at the start of a frame from the current one to the last the span's
        // ends count in, one per frame
        long lo = current - lifetime + frameSize;
        long hi = to + lifetime - frameSize;
        long[] dense = new long[(int) ((hi - lo) / frameSize) + 1];
        for (int i = counts.from(lo, true), end = counts.from(hi, false); i < end; i++) {
            dense[(int) ((counts.frame(i) - lo) / frameSize)] += counts.count(i);
        }
        int perWindow = (int) (lifetime / frameSize);
        long now = config.limit();
        long span = Long.MAX_VALUE;
        long sum = 0; // the frames counting at the start of frame g: g - lifetime < h <= g
        for (int j = 0; j < dense.length; j++) {
            sum += dense[j];
            if (j >= perWindow) {
                sum -= dense[j - perWindow];
            }
            long g = lo + j * frameSize;
            if (g < current) {
                continue;
            }
            if (g < current + lifetime) {
                now = Math.min(now, config.limit() - sum);
            }
            if (g < from) {
                continue;
            }
            int ends = (g < from + lifetime ? 1 : 0) + (to != from && g >= to ? 1 : 0);
            if (ends > 0) {
                span = Math.min(span, (ceiling - sum) / ends);
            }
        }
        return new long[] {Math.max(0, now), Math.max(0, span)};
    }

    /** Adds the span of {@code permits} from {@code from} to {@code to} to {@code counts}, at both ends. */
    private static Span chargeSpan(FrameCounts counts, long from, long to, long permits) {
        counts.add(from, permits);
        if (to != from) {
            counts.add(to, permits);
        }
        return new Span(from, to, permits);
    }

    /**
     * The frames a claim on a request takes as one {@linkplain Lease#spanFrom span} from the current frame on, up to
     * the frame of the next round at the latest, for a sub-window counter key asked less than about once per frame
     * ({@link SliceSizing#spans}), uncontended (not refused here in this interval or the last) and not shared by
     * instances that noted their demand in its record; 0 where the claim takes the current frame only. Without it,
     * such a key claims on nearly every request once its slices run out: each request is in a sub-window of its own.
     * The caller holds the lease's lock.
     */
    private int spanOnRequest(Lease ls, long now) {
        if (algorithm != Algorithm.SLIDING_WINDOW_COUNTER
                || sizing.longRounds
                || ls.refused
                || ls.lastRefused
                || !ls.read) {
            return 0;
        }
        long perInterval = perInterval(ls);
        long from = frameOf(now);
        int frames = (int) Math.min(lifetime / frameSize, (now + roundNanos - from) / frameSize + 1);
        if (!sizing.spans(perInterval, sizing.aheadDemand(perInterval), frames, lifetime / frameSize)) {
            return 0;
        }
        return contendedByNotes(ls, now) ? 0 : frames;
    }

    /**
     * Whether other instances, refused on the key, noted their demand in its record as last read: the key is contended
     * across the instances, and a span, which the record counts twice, would hold from them room they are refused.
     * The caller holds the lease's lock.
     */
    private boolean contendedByNotes(Lease ls, long now) {
        return othersNoted(ls, now) > 0;
    }

    /**
     * The demand the other instances noted in the record of {@code ls} as last read, live at {@code now}
     * ({@link DemandNotes#others}). The caller holds the lease's lock.
     */
    private long othersNoted(Lease ls, long now) {
        return DemandNotes.others(FrameMap.copyOf(ls.global.counters()), store.noteTag(), now);
    }

    /**
     * When the next round is expected, seen from a round that runs at {@code now}: an interval later, and for the fixed
     * window and the sliding tail as late again as the last round came ({@link #roundLag}). The sub-window counter
     * keeps to one interval: it claims ahead a slice (at least a permit) for every sub-window up to the next round, and
     * twice as many held ahead, with rounds an interval late on a loaded machine, kept floods that followed quiet
     * windows well below the limit (three processes on Redis, {@code RedisLeasedAdmissionsTest}).
     */
    private long nextRound(long now) {
        return now + roundNanos + (algorithm == Algorithm.SLIDING_WINDOW_COUNTER ? 0 : roundLag);
    }

    /** This instance's demand for {@code ls} per interval: the last interval's, or this one's so far if more. */
    private static long perInterval(Lease ls) {
        return Math.max(ls.lastDemand, ls.demand);
    }

    /**
     * Adds to {@code claims} (and {@code counts}) the {@linkplain SliceSizing#topUp top-up} of the slice of the current
     * frame, for a key asked {@code perInterval} times per interval: cut to the room a claim on a request would get
     * ({@link #roomNow}) and so that the algorithm's measure now stays within half the limit, as claims ahead do. The
     * caller holds the lease's lock.
     */
    private void topUp(Lease ls, FrameCounts counts, FrameCounts claims, long now, long perInterval) {
        long s = sizing.topUp(perInterval, ls.granted - ls.used, untilFrameEnds(now));
        if (s <= 0) {
            return;
        }
        long room = roomNow(counts, now);
        s = Math.min(s, room - (config.limit() - config.limit() / 2));
        if (s > 0) {
            claims.add(ls.frame, s);
            counts.add(ls.frame, s);
        }
    }

    /** The write was applied: it is the record now, and its claims are this instance's slices. */
    void applied(Write w) {
        Lease ls = w.lease();
        long read = now();
        ls.lock();
        try {
            took(ls, new CounterSnapshot(w.write().newVersion(), w.write().counters()));
            take(ls, w, timeIn(ls, read));
        } finally {
            ls.unlock();
        }
    }

    /**
     * Makes the claims of {@code w}, written to the store, this instance's slices: the current frame's adds to the
     * slice held, a later frame's is held ahead, and an earlier frame's (the frame turned since) is given back if it
     * still counts; a span is held, or given back if its last frame has passed. The caller holds the lease's lock.
     */
    private void take(Lease ls, Write w, long now) {
        roll(ls, now);
        FrameCounts claims = w.claims();
        Span span = w.span();
        if (span != null) {
            holdSpan(ls, span, now);
        }
        for (int i = 0; i < claims.size(); i++) {
            long frame = claims.frame(i);
            if (frame == ls.frame) {
                ls.granted += claims.count(i);
            } else if (frame < ls.frame && frame + lifetime > now) {
                ls.addDelta(frame, -claims.count(i)); // the frame turned during the call: give it back
            }
        }
        addAhead(ls, claims, claims.from(ls.frame, false));
    }

    /**
     * Holds {@code span}, written to the store: as the span held, or the next one if one is held; given back if its
     * last frame has passed, or if two are held already (a round prepares none then). The caller holds the lease's
     * lock, and the lease is rolled to {@code now}.
     */
    private void holdSpan(Lease ls, Span span, long now) {
        if (span.to() < ls.frame
                || ls.nextTo != Lease.NO_SPAN
                || (ls.spanTo != Lease.NO_SPAN && span.from() <= ls.spanTo)) {
            uncharge(ls, span.from(), span.to(), span.permits(), now);
        } else if (ls.spanTo == Lease.NO_SPAN) {
            ls.spanFrom = span.from();
            ls.spanTo = span.to();
            ls.spanLeft = span.permits();
        } else {
            ls.nextFrom = span.from();
            ls.nextTo = span.to();
            ls.nextLeft = span.permits();
        }
    }

    /** The slice claimed ahead for {@code frame}, 0 if none. The caller holds the lease's lock. */
    private long aheadOf(Lease ls, long frame) {
        long d = frame - ls.aheadFrom;
        if (ls.aheadLen == 0 || d < 0 || d % frameSize != 0 || d / frameSize >= ls.aheadLen) {
            return 0;
        }
        return ls.aheadSlices[ls.aheadHead + (int) (d / frameSize)];
    }

    /**
     * Adds the slices of {@code add} from its entry {@code first} on (frames after the current one, at frame starts) to
     * those claimed ahead: one new array spanning both. The caller holds the lease's lock.
     */
    private void addAhead(Lease ls, FrameCounts add, int first) {
        if (first == add.size()) {
            return;
        }
        long from = add.frame(first);
        long last = add.lastFrame();
        if (ls.aheadLen > 0) {
            from = Math.min(from, ls.aheadFrom);
            last = Math.max(last, ls.aheadFrom + (ls.aheadLen - 1) * frameSize);
        }
        int n = (int) ((last - from) / frameSize) + 1;
        long[] slices = new long[n];
        for (int i = 0; i < ls.aheadLen; i++) {
            slices[(int) ((ls.aheadFrom - from) / frameSize) + i] = ls.aheadSlices[ls.aheadHead + i];
        }
        for (int j = first; j < add.size(); j++) {
            slices[(int) ((add.frame(j) - from) / frameSize)] += add.count(j);
        }
        ls.aheadSlices = slices;
        ls.aheadFrom = from;
        ls.aheadHead = 0;
        ls.aheadLen = n;
    }

    /** The slices claimed ahead, per frame. The caller holds the lease's lock. */
    private Map<Long, Long> aheadMap(Lease ls) {
        TreeMap<Long, Long> m = new TreeMap<>();
        for (int i = 0; i < ls.aheadLen; i++) {
            long slice = ls.aheadSlices[ls.aheadHead + i];
            if (slice > 0) {
                m.put(ls.aheadFrom + i * frameSize, slice);
            }
        }
        return m;
    }

    /** The write met a conflict: nothing was written; the changes it carried wait for the next write. */
    void conflicted(Write w) {
        Lease ls = w.lease();
        ls.lock();
        try {
            ls.delta.addAll(w.carried());
        } finally {
            ls.unlock();
        }
    }

    /**
     * The call carrying the write failed: it may or may not have been applied. The claim is not taken now; the changes
     * carried are taken as written (if they were not, the permits they would have given back lapse with their frames).
     * Either way the store never counts less than was admitted. The write is kept as the lease's doubt: if the next
     * read of the record finds the version it wrote, it was applied and nobody wrote since, and its claims are taken
     * then ({@link #took}); any other version drops the doubt, and a claim that was applied lapses with its frame.
     */
    void unknown(Write w) {
        if (w.claimsNothing()) {
            return;
        }
        Lease ls = w.lease();
        ls.lock();
        try {
            ls.doubt = w;
        } finally {
            ls.unlock();
        }
    }

    /** The record just read. */
    void loaded(Lease ls, CounterSnapshot snapshot) {
        ls.lock();
        try {
            took(ls, snapshot);
        } finally {
            ls.unlock();
        }
    }

    private void took(Lease ls, CounterSnapshot snapshot) {
        ls.read = true;
        Write doubt = ls.doubt;
        ls.doubt = null;
        if (snapshot.version() != ls.global.version() || !snapshot.exists()) {
            ls.global = snapshot;
            FrameMap record = FrameMap.copyOf(snapshot.counters()); // a record's counts are one already: no copy
            int n = record.size();
            long[] frames = new long[n];
            long[] counts = new long[n];
            for (int j = 0; j < n; j++) {
                frames[j] = record.frame(j);
                counts[j] = record.count(j);
            }
            ls.globalFrames = frames;
            ls.globalCounts = counts;
            ls.globalLast = n == 0 ? Long.MIN_VALUE : frames[n - 1];
            rebuildView(ls, now());
        }
        if (doubt != null && snapshot.version() == doubt.write().newVersion()) {
            take(ls, doubt, now()); // the write in doubt was applied, and nobody wrote since
            store.recovered(doubt.claimed());
        }
        // any other version: not applied, or written over since; a claim applied that late lapses with its frame
    }

    /** Builds {@link Lease#view} from the record's frames up to the one of {@code now}. The caller holds the lease's lock. */
    private void rebuildView(Lease ls, long now) {
        long f = frameOf(now);
        int n = 0;
        while (n < ls.globalFrames.length && ls.globalFrames[n] <= f) {
            n++;
        }
        ls.view = FrameStates.restore(algorithm, params, ls.globalFrames, ls.globalCounts, n);
        ls.viewFrame = f;
        ls.viewNext = n;
        summarize(ls, now);
    }

    /**
     * Adds to {@link Lease#view} the record's frames after the one it was built for, up to {@code f}, each at its
     * start, as the requests charged to it: what rebuilding the view from the record would give, without walking the
     * record's past frames again. The view only informs answers and whether a claim is worth trying; a claim checks
     * the record itself. The caller holds the lease's lock.
     */
    private void advanceView(Lease ls, long f, long now) {
        long[] frames = ls.globalFrames;
        int j = ls.viewNext; // not a search: the frames are walked in order, each once
        for (; j < frames.length && frames[j] <= f; j++) {
            var unused = ls.view.decide(params, frames[j], ls.globalCounts[j], true);
        }
        ls.viewFrame = f;
        ls.viewNext = j;
        summarize(ls, now);
    }

    /** Notes what the view says at {@code now} (see {@link Lease#viewRoom}). The caller holds the lease's lock. */
    private void summarize(Lease ls, long now) {
        Decision m = ls.view.decide(params, now, 1, false);
        ls.viewRoom = m.remaining();
        ls.viewResetAt = now + m.resetAfterNanos();
    }

    /**
     * The answer to a request admitted from the slice: {@code remaining} is the slice left plus the room the record
     * left when last read (or when the frame turned), {@code resetAfter} the later of the end of the slice's frame and
     * the moment that record's measure falls to zero. No second run of the algorithm, and no division.
     */
    private Decision admitted(Lease ls, long now) {
        long remaining = Math.min(config.limit(), Math.max(0, ls.granted - ls.used) + ls.viewRoom);
        long reset = Math.max(Math.max(0, ls.viewResetAt - now), ls.frame + frameSize - now);
        return Decision.allowed(config.limit(), remaining, reset);
    }

    /**
     * The round's work on every lease: roll it to the current frame, give back the part of its slice beyond what
     * this instance expects to need before the next round (all of it for an idle key), start a new demand interval,
     * lift starvation, drop idle keys. Adds to {@code write} the leases with changes to write, and to {@code read} the
     * leases refused since the last round whose record as last read leaves no room for a claim (to see what others
     * gave back; a lease with room will read the record anyway if its next claim meets a conflict) and those with a
     * write in doubt (to settle it). Marks none busy: the store marks each for the time of its call
     * ({@link #prepareForRound}, {@link LeasedStore#hold}).
     */
    void round(List<Lease> write, List<Lease> read) {
        long started = now();
        if (lastRoundStarted != Long.MIN_VALUE) {
            roundLag = Math.max(0, Math.min(roundNanos, started - lastRoundStarted - roundNanos));
        }
        lastRoundStarted = started;
        for (Lease ls : leases) {
            ls.lock();
            try {
                if (ls.retired() || ls.busy != null) {
                    continue;
                }
                long now = timeIn(ls, started);
                roll(ls, now);
                if (ls.demand > 0) {
                    ls.recurring = ls.quietRounds < SliceSizing.SPARSE_ROUNDS; // asked in an interval before too
                    ls.quietRounds = 0;
                } else if (++ls.quietRounds >= SliceSizing.SPARSE_ROUNDS) {
                    ls.quietRounds = SliceSizing.SPARSE_ROUNDS;
                    ls.recurring = false;
                }
                boolean keeps = keeps(ls);
                long expected = SliceSizing.demandAhead(Math.max(ls.demand, ls.lastDemand), keeps);
                long unused = ls.granted - ls.used;
                if (ls.demand == 0 && !keeps) {
                    // a sub-window's slice ending by the next round is held to its end (SliceSizing.holdsToFrameEnd)
                    if (unused > 0 && (ls.refused || ls.lastRefused || !sizing.holdsToFrameEnd(untilFrameEnds(now)))) {
                        giveBackSlice(ls, unused);
                    }
                    giveBackAhead(ls);
                    giveBackSpans(ls, now);
                } else if (unused > (keeps ? SliceSizing.keptUnused(expected) : 2 * expected)) {
                    giveBackSlice(ls, unused - expected);
                }
                if (ls.demand > 0) {
                    ls.lastUsed = Math.max(ls.lastUsed, now); // requests since the last round
                }
                boolean refused = ls.refused;
                ls.lastRefused = refused;
                ls.lastDemand = ls.demand;
                ls.demand = 0;
                ls.refused = false;
                ls.starvedUntil = Long.MIN_VALUE;
                if (ls.delta.isEmpty()
                        && ls.aheadLen == 0
                        && ls.spanTo == Lease.NO_SPAN
                        && ls.granted == ls.used
                        && ls.doubt == null
                        && now - ls.lastUsed >= idleNanos) {
                    ls.retire();
                    leases.remove(ls);
                    store.evicted();
                    continue;
                }
                long ahead = SliceSizing.demandAhead(ls.lastDemand, keeps);
                if (!ls.delta.isEmpty()
                        || (ahead > 0
                                && !refused
                                && (frameOf(now) + frameSize <= nextRound(now)
                                        || (keeps
                                                && sizing.topUp(ahead, ls.granted - ls.used, untilFrameEnds(now))
                                                        > 0)))) {
                    write.add(ls); // something to give back, a frame to claim ahead or a slice to top up
                } else if (ls.doubt != null
                        || (refused
                                && room(ls.view, now) < Math.max(1, Math.min(sizing.minClaim, expected(ls, now))))) {
                    read.add(ls); // a write in doubt to settle, or refused with no claim worth trying: read again
                }
            } finally {
                ls.unlock();
            }
        }
    }

    /**
     * Whether the round keeps {@code ls}'s slice between requests and tops it up ({@link SliceSizing#keeps}): its
     * demand recurs, and other instances do not usually write its record between this one's writes
     * ({@link Lease#readFirst}). A key shared by busy instances is contended: a slice held unused here is room another
     * instance is refused, so such a key claims on requests. The caller holds the lease's lock.
     */
    private boolean keeps(Lease ls) {
        return sizing.keeps(ls.recurring, ls.quietRounds) && !ls.readFirst();
    }

    /** Every lease: for a store that has been failing, one read to see whether it answers again. */
    @Nullable
    Lease any() {
        for (Lease ls : leases) {
            return ls;
        }
        return null;
    }

    private void giveBackSlice(Lease ls, long permits) {
        ls.granted -= permits;
        ls.addDelta(ls.frame, -permits);
    }

    /** Gives back every slice claimed ahead (with the next write). The caller holds the lease's lock. */
    private void giveBackAhead(Lease ls) {
        for (Map.Entry<Long, Long> e : aheadMap(ls).entrySet()) {
            ls.addDelta(e.getKey(), -e.getValue());
        }
        ls.aheadSlices = new long[0];
        ls.aheadHead = 0;
        ls.aheadLen = 0;
    }

    /** Closes the limiter: every slice's unused part becomes a give-back; returns the leases with changes to write. */
    List<Lease> closeAndTakeLeases() {
        markClosed();
        return giveBackAll(true);
    }

    /** Makes every slice's unused part a give-back, for the store's close; the limiter stays usable. */
    List<Lease> returnAll() {
        return giveBackAll(false);
    }

    /**
     * Makes every slice's unused part, and every slice claimed ahead, a give-back; with {@code letGo} (the limiter
     * closes) also takes each lease out of the limiter and retires it. Returns the leases with changes to write.
     */
    private List<Lease> giveBackAll(boolean letGo) {
        long now = now();
        List<Lease> out = new ArrayList<>();
        for (Lease ls : leases) {
            ls.lock();
            try {
                if (letGo) {
                    leases.remove(ls);
                }
                roll(ls, timeIn(ls, now));
                if (ls.granted > ls.used) {
                    giveBackSlice(ls, ls.granted - ls.used);
                }
                giveBackAhead(ls);
                giveBackSpans(ls, now);
                if (!ls.retired() && !ls.delta.isEmpty()) {
                    out.add(ls);
                }
                if (letGo) {
                    ls.retire();
                }
            } finally {
                ls.unlock();
            }
        }
        return out;
    }

    // ---- helpers ------------------------------------------------------------------------------------------------

    private long frameOf(long now) {
        return Math.floorDiv(now, frameSize) * frameSize;
    }

    private AlgorithmState fresh() {
        return FrameStates.restore(algorithm, params, new long[0], new long[0], 0);
    }

    /** The state of the frames of {@code counts} (in increasing frame order) up to {@code upTo}, inclusive. */
    private AlgorithmState restore(FrameCounts counts, long upTo) {
        long[] frames = new long[counts.size()];
        long[] values = new long[counts.size()];
        int n = 0;
        for (int i = 0; i < counts.size() && counts.frame(i) <= upTo; i++) {
            if (counts.count(i) > 0) {
                frames[n] = counts.frame(i);
                values[n] = counts.count(i);
                n++;
            }
        }
        return FrameStates.restore(algorithm, params, frames, values, n);
    }

    /** What this instance holds for {@code key}, for tests; null if nothing. */
    @Nullable
    Held inspect(String key) {
        Lease ls = leases.get(key);
        if (ls == null) {
            return null;
        }
        ls.lock();
        try {
            long spans = ls.spanLeft + ls.nextLeft;
            return new Held(ls.frame, ls.granted, ls.used, aheadMap(ls), spans, ls.delta.toMap(), ls.global.total());
        } finally {
            ls.unlock();
        }
    }

    /** The permits this limiter holds unused over all keys: slices left and give-backs not yet written. */
    long unused() {
        long u = 0;
        for (Lease ls : leases) {
            ls.lock();
            try {
                u += ls.unused();
            } finally {
                ls.unlock();
            }
        }
        return u;
    }

    /**
     * A lease as seen by a test.
     *
     * @param frame   the frame of the slice
     * @param granted the slice
     * @param used    what was admitted of it
     * @param ahead   the slices claimed ahead, per frame
     * @param spans   the permits left in the spans held
     * @param delta   the changes not yet written, per frame
     * @param global  the total of the record as last read or written
     */
    record Held(
            long frame,
            long granted,
            long used,
            Map<Long, Long> ahead,
            long spans,
            Map<Long, Long> delta,
            long global) {}

    /**
     * A {@linkplain Lease#spanFrom span} claimed ahead: {@code permits} good in any frame from {@code from} to
     * {@code to}, counted in the record at both.
     */
    record Span(long from, long to, long permits) {}

    /**
     * The working arrays of {@link #claimAhead}, kept from key to key and round to round (a round of a sub-window
     * counter over many keys made six arrays of a record's frames for every key). Written before read: nothing of one
     * key's claims is seen by the next.
     */
    private static final class Scratch {
        long[] frames = new long[0];
        long[] count = new long[0];
        long[] measure = new long[0];
        long[] base = new long[0];
        int[] most = new int[0];
        long[] slices = new long[0];

        /** This, with room for {@code n} frames. */
        Scratch fit(int n) {
            if (frames.length < n) {
                int size = Math.max(n, 2 * frames.length);
                frames = new long[size];
                count = new long[size];
                measure = new long[size];
                base = new long[size];
                most = new int[size];
                slices = new long[2 * size];
            }
            return this;
        }
    }

    /**
     * A write prepared for one lease in {@code frame}: the claims it carries, per frame (that frame's for a request,
     * later frames' for a round claiming ahead), a span claimed ahead if any, and the changes of {@code delta}.
     */
    record Write(
            Lease lease, CounterWrite write, long frame, FrameCounts claims, @Nullable Span span, FrameDeltas carried)
            implements PreparedWrite<Lease> {
        @Override
        public Lease key() {
            return lease;
        }

        /** The permits claimed, over every frame. */
        long claimed() {
            long c = claims.sum();
            return span != null ? c + span.permits() : c;
        }

        /** Whether the write claims no permits: no slice and no span. */
        boolean claimsNothing() {
            return claims.isEmpty() && span == null;
        }

        /** Whether the write claims ahead: for a frame later than {@code frame}, the one it was prepared in. */
        boolean claimsAhead() {
            return (span != null && span.from() > frame) || (!claims.isEmpty() && claims.lastFrame() > frame);
        }
    }

    @Override
    public String toString() {
        return describe("LeasedLimiter", leases.size());
    }
}
